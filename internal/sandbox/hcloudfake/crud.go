package hcloudfake

import (
	"cmp"
	"maps"
	"net/http"
	"net/url"
	"slices"
)

// collection describes one kind of project resource (servers, volumes, load
// balancers, ...) for the handlers every kind shares: list with filters,
// label_selector, sorting and pagination, get by ID, rename and relabel, and
// delete. S is the stored form (a pointer), R the form the API shows.
type collection[S any, R any] struct {
	plural string // path segment and list key, e.g. "load_balancers"
	single string // key of one item in a response, e.g. "load_balancer"
	noun   string // in not-found messages, e.g. "load balancer"
	items  map[int64]S
	// fields returns the ID and pointers to the name and labels of an item.
	fields func(S) (id int64, name *string, labels *map[string]string)
	render func(S) R
	// keep filters the list by the kind's own query parameters; nil keeps all.
	keep func(q url.Values, s S) bool
	// sortField returns the value of a sort key other than id and name; may be nil.
	sortField func(s S, field string) string
	// create serves POST /{plural}; nil: the kind cannot be created.
	create func(rq *request) (int, any, error)
	// action serves POST /{plural}/{id}/actions/{command}; nil: the kind has
	// no actions, and paths other than /{plural} and /{plural}/{id} are
	// refused before the ID is looked at.
	action func(rq *request, s S, command string) (int, any, error)
	// update decodes and applies PUT /{plural}/{id}.
	update func(rq *request, s S) error
	// remove checks and cleans up before DELETE /{plural}/{id} removes the
	// item, and returns the deletion's action (nil: 204 No Content).
	remove func(rq *request, id int64, s S) (*action, error)
	// removeStatus is the status of a delete that returns an action
	// (0: 200, as DELETE /servers/{id} answers).
	removeStatus int
}

// serve answers /{plural}, /{plural}/{id} and /{plural}/{id}/actions/{command}.
func (c *collection[S, R]) serve(f *Fake, rq *request) (int, any, error) {
	if len(rq.segs) == 1 {
		switch {
		case rq.method == http.MethodGet:
			return c.list(rq)
		case rq.method == http.MethodPost && c.create != nil:
			return c.create(rq)
		case c.action != nil:
			return 0, nil, errMethod(rq)
		}
		return 0, nil, errNoRoute(rq)
	}
	if c.action == nil && len(rq.segs) != 2 {
		return 0, nil, errNoRoute(rq)
	}
	id, err := rq.idAt(1)
	if err != nil {
		return 0, nil, err
	}
	s, ok := c.items[id]
	if !ok {
		return 0, nil, errNotFound(c.noun, id)
	}
	if len(rq.segs) == 4 && rq.segs[2] == "actions" && rq.method == http.MethodPost {
		if typ := resourceTypes[c.plural]; slices.Contains(lockable, typ) {
			if err := f.checkUnlocked(typ, id); err != nil {
				return 0, nil, err
			}
		}
		return c.action(rq, s, rq.segs[3])
	}
	if len(rq.segs) != 2 {
		return 0, nil, errNoRoute(rq)
	}
	switch rq.method {
	case http.MethodGet:
		return http.StatusOK, map[string]any{c.single: c.render(s)}, nil
	case http.MethodPut:
		if err := c.update(rq, s); err != nil {
			return 0, nil, err
		}
		return http.StatusOK, map[string]any{c.single: c.render(s)}, nil
	case http.MethodDelete:
		var a *action
		if c.remove != nil {
			if a, err = c.remove(rq, id, s); err != nil {
				return 0, nil, err
			}
		}
		delete(c.items, id)
		if a != nil {
			return cmp.Or(c.removeStatus, http.StatusOK), f.actionBody(a, rq.now), nil
		}
		return http.StatusNoContent, nil, nil
	}
	return 0, nil, errMethod(rq)
}

// list answers GET /{plural}: the kind's own filters, then name,
// label_selector, sort and page as listResponse does.
func (c *collection[S, R]) list(rq *request) (int, any, error) {
	items := make([]S, 0, len(c.items))
	for _, s := range c.items {
		if c.keep == nil || c.keep(rq.query, s) {
			items = append(items, s)
		}
	}
	acc := accessor[S]{
		id: func(s S) int64 {
			id, _, _ := c.fields(s)
			return id
		},
		name: func(s S) string {
			_, name, _ := c.fields(s)
			return *name
		},
		labels: func(s S) map[string]string {
			_, _, labels := c.fields(s)
			return *labels
		},
		field: c.sortField,
	}
	out, err := listRendered(rq.query, c.plural, items, acc, c.render)
	return http.StatusOK, out, err
}

// taken reports whether an item already has this name.
func (c *collection[S, R]) taken(name string) bool {
	for _, s := range c.items {
		if _, n, _ := c.fields(s); *n == name {
			return true
		}
	}
	return false
}

// patch applies the name and labels of an update request: a new name (nil
// or unchanged: kept) must be unused, and labels (nil: kept) replace the
// item's labels after validation.
func (c *collection[S, R]) patch(s S, name *string, labels *map[string]string) error {
	_, cur, lp := c.fields(s)
	if name != nil && *name != *cur {
		if c.taken(*name) {
			return errUniqueness("name")
		}
		*cur = *name
	}
	if labels != nil {
		if err := checkLabels(*labels); err != nil {
			return err
		}
		*lp = maps.Clone(*labels)
	}
	return nil
}

// optName is the name of an update request whose name field is a plain
// string: empty means "keep the name".
func optName(name string) *string {
	if name == "" {
		return nil
	}
	return &name
}

// checkNewLabels validates the optional labels of a create request.
func checkNewLabels(labels *map[string]string) error {
	if labels == nil {
		return nil
	}
	return checkLabels(*labels)
}

// path is the first path segment of the kind, e.g. "load_balancers".
func (c *collection[S, R]) path() string { return c.plural }

// decodeCreate decodes the body of POST /{plural} and checks the new item's
// name (from name): it is required and must be unused.
func decodeCreate[T, S, R any](rq *request, c *collection[S, R], name func(*T) string) (*T, error) {
	req := new(T)
	if err := rq.decode(req); err != nil {
		return nil, err
	}
	switch n := name(req); {
	case n == "":
		return nil, errInvalid("name", "name is required")
	case c.taken(n):
		return nil, errUniqueness("name")
	}
	return req, nil
}

// patchBy returns the update of a kind whose PUT changes only name and
// labels: it decodes a U and patches what get returns of it.
func patchBy[U, S, R any](c *collection[S, R], get func(*U) (name *string, labels *map[string]string)) func(*request, S) error {
	return func(rq *request, s S) error {
		req := new(U)
		if err := rq.decode(req); err != nil {
			return err
		}
		name, labels := get(req)
		return c.patch(s, name, labels)
	}
}

// anyOf is a list filter: it keeps items whose field is one of the values of
// a repeatable query parameter (?status=running&status=off), or all items
// when the parameter is absent.
func anyOf[S any](param string, field func(S) string) func(url.Values, S) bool {
	return func(q url.Values, s S) bool { return len(q[param]) == 0 || slices.Contains(q[param], field(s)) }
}

// equalTo is a list filter: it keeps items whose field equals the query
// parameter, or all items when the parameter is empty.
func equalTo[S any](param string, field func(S) string) func(url.Values, S) bool {
	return func(q url.Values, s S) bool { v := q.Get(param); return v == "" || field(s) == v }
}

// withOwnLabels is the render of kinds whose API form is the stored item
// itself: a copy with its own copy of the labels.
func withOwnLabels[T any](fields func(*T) (int64, *string, *map[string]string)) func(*T) T {
	return func(x *T) T {
		out := *x
		_, _, labels := fields(&out)
		*labels = maps.Clone(*labels)
		return out
	}
}
