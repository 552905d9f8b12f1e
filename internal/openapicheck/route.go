package openapicheck

import (
	"net/http"
	"sort"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/routers"
)

// route is one operation: its method and path template, split in segments.
type route struct {
	method, template string
	segs             []string
	item             *openapi3.PathItem
	op               *openapi3.Operation
}

// routesOf lists the operations of a document, most literal first, so that
// /load_balancers/{id}/actions/add_target wins over .../actions/{action_id}.
func routesOf(doc *openapi3.T) []route {
	var out []route
	for tmpl, item := range doc.Paths.Map() {
		for method, op := range item.Operations() {
			out = append(out, route{method: method, template: tmpl, segs: split(tmpl), item: item, op: op})
		}
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := literals(out[i].segs), literals(out[j].segs)
		if a != b {
			return a > b
		}
		return out[i].method+out[i].template < out[j].method+out[j].template
	})
	return out
}

func split(path string) []string {
	p := strings.Trim(path, "/")
	if p == "" {
		return nil
	}
	return strings.Split(p, "/")
}

func literals(segs []string) int {
	n := 0
	for _, s := range segs {
		if !isParam(s) {
			n++
		}
	}
	return n
}

func isParam(seg string) bool { return strings.HasPrefix(seg, "{") && strings.HasSuffix(seg, "}") }

// find returns the operation a request names and its path parameters, or
// false (then whether the path is known under another method).
func (c *Checker) find(method, path string) (*route, map[string]string, bool) {
	segs := split(path)
	for i := range c.routes {
		r := &c.routes[i]
		if r.method != method || len(r.segs) != len(segs) {
			continue
		}
		if params, ok := match(r.segs, segs); ok {
			return r, params, true
		}
	}
	return nil, nil, false
}

func match(tmpl, segs []string) (map[string]string, bool) {
	params := map[string]string{}
	for i, t := range tmpl {
		switch {
		case isParam(t):
			if segs[i] == "" {
				return nil, false
			}
			params[strings.Trim(t, "{}")] = segs[i]
		case t != segs[i]:
			return nil, false
		}
	}
	return params, true
}

// routerRoute is the kin-openapi form of a route, for openapi3filter.
func (c *Checker) routerRoute(r *route) *routers.Route {
	return &routers.Route{Spec: c.doc, Path: r.template, PathItem: r.item, Method: r.method, Operation: r.op}
}

// opName names an operation as "GET /servers/{id}".
func opName(method, template string) string {
	if method == "" {
		method = http.MethodGet
	}
	return method + " " + template
}
