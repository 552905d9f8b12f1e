package bwfake

import (
	"regexp"
	"sort"
	"strings"
)

// guid is the shape of an ID (Utils.isGuid in bitwarden/clients).
var guid = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$`)

// cipher renders an item as the CLI's CipherResponse.
func cipher(it Item) map[string]any {
	fields := make([]map[string]any, 0, len(it.Fields))
	for _, fl := range it.Fields {
		fields = append(fields, map[string]any{"name": fl.Name, "value": fl.Value, "type": fl.Type, "linkedId": nil})
	}
	var notes any
	if it.Notes != "" {
		notes = it.Notes
	}
	return map[string]any{
		"object": "item", "id": it.ID, "organizationId": nil, "folderId": nil, "type": 1, "reprompt": 0,
		"name": it.Name, "notes": notes, "favorite": false, "fields": fields, "collectionIds": []string{},
		"login":        map[string]any{"uris": []any{}, "username": it.Username, "password": it.Password, "totp": nil, "passwordRevisionDate": nil},
		"revisionDate": "2026-11-01T00:00:00.000Z", "creationDate": "2026-11-01T00:00:00.000Z", "deletedDate": nil,
		"passwordHistory": nil,
	}
}

// search returns the items whose name, username or ID contains term, case
// insensitively (searchCiphersBasic).
func (f *Fake) search(term string) []Item {
	term = strings.ToLower(term)
	var out []Item
	for _, it := range f.opts.Items {
		if term == "" || strings.Contains(strings.ToLower(it.Name), term) ||
			strings.Contains(strings.ToLower(it.Username), term) || strings.HasPrefix(it.ID, term) {
			out = append(out, it)
		}
	}
	return out
}

// list answers GET /list/object/items?search=TERM with a ListResponse.
func (f *Fake) list(term string) envelope {
	data := []map[string]any{}
	for _, it := range f.search(term) {
		data = append(data, cipher(it))
	}
	return envelope{Success: true, Data: map[string]any{"object": "list", "data": data}}
}

// find resolves an ID or a name the way `bw get` does; keep filters the
// candidates of a name search (a password read skips items without one).
func (f *Fake) find(id string, keep func(Item) bool) (Item, envelope, bool) {
	id = strings.ToLower(id)
	if guid.MatchString(id) {
		for _, it := range f.opts.Items {
			if it.ID == id && keep(it) {
				return it, envelope{}, true
			}
		}
		return Item{}, fail("Not found."), false
	}
	if strings.TrimSpace(id) == "" {
		return Item{}, fail("Not found."), false
	}
	var hits []Item
	for _, it := range f.search(id) {
		if strings.ToLower(it.Name) == id && keep(it) {
			return it, envelope{}, true
		}
		if keep(it) {
			hits = append(hits, it)
		}
	}
	switch len(hits) {
	case 0:
		return Item{}, fail("Not found."), false
	case 1:
		return hits[0], envelope{}, true
	}
	ids := make([]string, 0, len(hits))
	for _, h := range hits {
		ids = append(ids, h.ID)
	}
	sort.Strings(ids)
	return Item{}, envelope{Success: false, Data: ids,
		Message: "More than one result was found. Try getting a specific object by `id` instead. The following objects were found:\n" + strings.Join(ids, "\n")}, false
}

// getItem answers GET /object/item/{id}.
func (f *Fake) getItem(id string) envelope {
	it, e, ok := f.find(id, func(Item) bool { return true })
	if !ok {
		return e
	}
	return envelope{Success: true, Data: cipher(it)}
}

// getPassword answers GET /object/password/{id} with a StringResponse.
func (f *Fake) getPassword(id string) envelope {
	it, e, ok := f.find(id, func(it Item) bool { return strings.TrimSpace(it.Password) != "" })
	if !ok {
		return e
	}
	return envelope{Success: true, Data: map[string]any{"object": "string", "data": it.Password}}
}
