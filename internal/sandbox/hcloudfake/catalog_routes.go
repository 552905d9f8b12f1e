package hcloudfake

import (
	"net/http"

	"github.com/hetznercloud/hcloud-go/v2/hcloud/schema"
)

// serveCatalog serves the read-only catalog: server_types, locations,
// datacenters, load_balancer_types (list and get by ID) and pricing.
func (f *Fake) serveCatalog(rq *request) (int, any, error) {
	if rq.method != http.MethodGet {
		return 0, nil, errMethod(rq)
	}
	switch rq.segs[0] {
	case "pricing":
		if len(rq.segs) != 1 {
			return 0, nil, errNoRoute(rq)
		}
		return http.StatusOK, schema.PricingGetResponse{Pricing: f.cat.pricing}, nil
	case "server_types":
		return catalogRoute(rq, "server_type", "server_types", f.serverTypes(),
			func(x schema.ServerType) int64 { return x.ID }, func(x schema.ServerType) string { return x.Name })
	case "locations":
		return catalogRoute(rq, "location", "locations", f.cat.locations,
			func(x schema.Location) int64 { return x.ID }, func(x schema.Location) string { return x.Name })
	case "datacenters":
		return catalogRoute(rq, "datacenter", "datacenters", f.cat.datacenters,
			func(x schema.Datacenter) int64 { return x.ID }, func(x schema.Datacenter) string { return x.Name })
	case "load_balancer_types":
		return catalogRoute(rq, "load_balancer_type", "load_balancer_types", f.cat.lbTypes,
			func(x schema.LoadBalancerType) int64 { return x.ID }, func(x schema.LoadBalancerType) string { return x.Name })
	}
	return 0, nil, errNoRoute(rq)
}

func catalogRoute[T any](rq *request, single, plural string, items []T, id func(T) int64, name func(T) string) (int, any, error) {
	switch len(rq.segs) {
	case 1:
		out, err := listResponse(rq.query, plural, append([]T(nil), items...), accessor[T]{id: id, name: name})
		return http.StatusOK, out, err
	case 2:
		want, err := rq.idAt(1)
		if err != nil {
			return 0, nil, err
		}
		for _, it := range items {
			if id(it) == want {
				return http.StatusOK, map[string]any{single: it}, nil
			}
		}
		return 0, nil, errNotFound(single, want)
	}
	return 0, nil, errNoRoute(rq)
}
