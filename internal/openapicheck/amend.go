package openapicheck

import "regexp"

// An Amendment is a change of Hetzner's API after the description was
// rendered, or a reading of the description's own prose its schemas leave
// out. Each names its source.
type Amendment struct {
	Name, Source string
	apply        func(doc map[string]any) int
}

// HCloudAmendments are the amendments LoadHCloudFile applies to hcloud-openapi
// (February 2026), with the sources that state them.
var HCloudAmendments = []Amendment{
	{Name: "servers and primary IPs no longer carry the deprecated datacenter property",
		Source: "docs.hetzner.cloud/changelog#2026-07-01-removing-datacenters (hcloud-go v2.45 removed Server.Datacenter and PrimaryIP.Datacenter: \"the property was already removed from the Hetzner Cloud API\")",
		apply:  unrequireDeprecated("datacenter")},
	{Name: "DELETE /load_balancers/{id} answers 201 with an action instead of 204",
		Source: "docs.hetzner.cloud/changelog#2026-10-05-delete-load-balancer-returns-action (hcloud-go v2.52 LoadBalancerClient.DeleteWithResult)",
		apply:  deleteLBReturnsAction},
	{Name: "a property documented as \"ID or name\" (ssh_keys: \"IDs (`integer`) or names (`string`)\") takes an integer ID too",
		Source: "the properties' own descriptions in hcloud-openapi; hcloud-go's schema.IDOrName sends an ID as a JSON integer",
		apply:  idOrName},
}

// unrequireDeprecated drops prop from the required list of every object
// schema whose prop is marked deprecated.
func unrequireDeprecated(prop string) func(map[string]any) int {
	return func(doc map[string]any) int {
		n := 0
		walk(doc, func(m map[string]any) {
			props, _ := m["properties"].(map[string]any)
			p, _ := props[prop].(map[string]any)
			req, _ := m["required"].([]any)
			if p == nil || p["deprecated"] != true || len(req) == 0 {
				return
			}
			kept := req[:0:0]
			for _, r := range req {
				if r != prop {
					kept = append(kept, r)
				}
			}
			if len(kept) != len(req) {
				m["required"] = kept
				n++
			}
		})
		return n
	}
}

// deleteLBReturnsAction documents DELETE /load_balancers/{id} as 201 with
// the body DELETE /servers/{id} has (an action).
func deleteLBReturnsAction(doc map[string]any) int {
	paths, _ := doc["paths"].(map[string]any)
	resps := dig(paths, "/load_balancers/{id}", "delete", "responses")
	withAction := dig(paths, "/servers/{id}", "delete", "responses", "200")
	if resps == nil || withAction == nil {
		return 0
	}
	delete(resps, "204")
	resps["201"] = withAction
	return 1
}

var idOrNameProse = regexp.MustCompile("ID or name|IDs \\(`integer`\\) or names")

// idOrName lets string properties whose description says they take an ID
// or a name take an integer as well.
func idOrName(doc map[string]any) int {
	n := 0
	walk(doc, func(m map[string]any) {
		desc, _ := m["description"].(string)
		if !idOrNameProse.MatchString(desc) {
			return
		}
		target := m
		if m["type"] == "array" {
			target, _ = m["items"].(map[string]any)
		}
		if target == nil || target["type"] != "string" {
			return
		}
		delete(target, "type")
		target["anyOf"] = []any{map[string]any{"type": "string"}, map[string]any{"type": "integer"}}
		n++
	})
	return n
}

// walk calls fn on every JSON object under v.
func walk(v any, fn func(map[string]any)) {
	switch x := v.(type) {
	case map[string]any:
		fn(x)
		for _, c := range x {
			walk(c, fn)
		}
	case []any:
		for _, c := range x {
			walk(c, fn)
		}
	}
}

// dig follows keys through nested objects.
func dig(m map[string]any, keys ...string) map[string]any {
	for _, k := range keys {
		next, _ := m[k].(map[string]any)
		if next == nil {
			return nil
		}
		m = next
	}
	return m
}

// String names the amendment and its source.
func (a Amendment) String() string { return a.Name + " (" + a.Source + ")" }
