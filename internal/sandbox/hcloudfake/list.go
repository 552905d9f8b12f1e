package hcloudfake

import (
	"cmp"
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/hetznercloud/hcloud-go/v2/hcloud/schema"
)

// Hetzner's pagination: 25 items per page by default, at most 50.
const (
	defaultPerPage = 25
	maxPerPage     = 50
)

// accessor reads the fields of an item that listing filters and sorts by.
type accessor[T any] struct {
	id     func(T) int64
	name   func(T) string            // nil: no name filter
	labels func(T) map[string]string // nil: no label_selector
	// field returns the value of another sortable field (e.g. "status").
	field func(T, string) string
}

// listResponse filters items by name and label_selector, sorts them by the
// sort parameters (default id ascending) and returns the requested page as
// {"<key>": [...], "meta": {"pagination": {...}}}.
func listResponse[T any](q url.Values, key string, items []T, acc accessor[T]) (map[string]any, error) {
	return listRendered(q, key, items, acc, func(t T) T { return t })
}

// listRendered is listResponse for stored items: it filters, sorts and pages
// them and renders only the items of the page.
func listRendered[T, R any](q url.Values, key string, items []T, acc accessor[T], render func(T) R) (map[string]any, error) {
	if name := q.Get("name"); name != "" && acc.name != nil {
		items = slices.DeleteFunc(items, func(t T) bool { return acc.name(t) != name })
	}
	if ls := q.Get("label_selector"); ls != "" && acc.labels != nil {
		sel, err := parseSelector(ls)
		if err != nil {
			return nil, errInvalid("label_selector", err.Error())
		}
		items = slices.DeleteFunc(items, func(t T) bool { return !sel.matches(acc.labels(t)) })
	}
	if err := sortItems(items, q["sort"], acc); err != nil {
		return nil, err
	}
	page, perPage, err := pageParams(q)
	if err != nil {
		return nil, err
	}
	total := len(items)
	last := max(1, (total+perPage-1)/perPage)
	start := min(total, (page-1)*perPage)
	end := min(total, start+perPage)
	p := schema.MetaPagination{Page: page, PerPage: perPage, LastPage: last, TotalEntries: total}
	if page > 1 {
		p.PreviousPage = page - 1
	}
	if page < last {
		p.NextPage = page + 1
	}
	pageItems := make([]R, 0, end-start)
	for _, t := range items[start:end] {
		pageItems = append(pageItems, render(t))
	}
	return map[string]any{key: pageItems, "meta": map[string]any{"pagination": p}}, nil
}

func pageParams(q url.Values) (page, perPage int, err error) {
	page, perPage = 1, defaultPerPage
	if v := q.Get("page"); v != "" {
		if page, err = strconv.Atoi(v); err != nil || page < 1 {
			return 0, 0, errInvalid("page", "page must be a positive integer")
		}
	}
	if v := q.Get("per_page"); v != "" {
		if perPage, err = strconv.Atoi(v); err != nil || perPage < 1 {
			return 0, 0, errInvalid("per_page", "per_page must be a positive integer")
		}
		perPage = min(perPage, maxPerPage)
	}
	return page, perPage, nil
}

// sortItems sorts stably by the given keys ("id", "name:desc", "status", ...),
// then by ID ascending.
func sortItems[T any](items []T, sorts []string, acc accessor[T]) error {
	type key struct {
		field string
		desc  bool
	}
	var keys []key
	for _, s := range sorts {
		field, dir, _ := strings.Cut(s, ":")
		if dir != "" && dir != "asc" && dir != "desc" {
			return errInvalid("sort", fmt.Sprintf("invalid sort direction %q", dir))
		}
		keys = append(keys, key{field: field, desc: dir == "desc"})
	}
	slices.SortStableFunc(items, func(a, b T) int {
		for _, k := range keys {
			var c int
			switch k.field {
			case "id", "created":
				c = cmp.Compare(acc.id(a), acc.id(b))
			case "name":
				if acc.name != nil {
					c = cmp.Compare(acc.name(a), acc.name(b))
				}
			default:
				if acc.field != nil {
					c = cmp.Compare(acc.field(a, k.field), acc.field(b, k.field))
				}
			}
			if k.desc {
				c = -c
			}
			if c != 0 {
				return c
			}
		}
		return cmp.Compare(acc.id(a), acc.id(b))
	})
	return nil
}
