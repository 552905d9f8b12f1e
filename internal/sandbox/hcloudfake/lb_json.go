package hcloudfake

import "github.com/hetznercloud/hcloud-go/v2/hcloud/schema"

// lbJSON is a load balancer as the API writes it. hcloud-go's
// schema.LoadBalancerTarget has no omitempty, so it would write
// "server": null, "ip": null, "health_status": null for the fields that do
// not apply to a target's type; Hetzner's API description
// (hcloud-openapi, components.schemas.load_balancer_target) allows no null
// there, and the API leaves them out (docs.hetzner.cloud/reference/cloud
// #tag/load-balancers/get_load_balancer: a server target carries server
// and health_status, a label_selector target label_selector and targets,
// an ip target ip and health_status).
type lbJSON struct {
	schema.LoadBalancer
	Targets []targetJSON `json:"targets"`
}

// targetJSON is a load balancer target without the fields its type lacks;
// health_status is left out only when absent (nil), an empty list stays.
type targetJSON struct {
	Type          string                                  `json:"type"`
	Server        *schema.LoadBalancerTargetServer        `json:"server,omitempty"`
	LabelSelector *schema.LoadBalancerTargetLabelSelector `json:"label_selector,omitempty"`
	IP            *schema.LoadBalancerTargetIP            `json:"ip,omitempty"`
	HealthStatus  []schema.LoadBalancerTargetHealthStatus `json:"health_status,omitzero"`
	UsePrivateIP  bool                                    `json:"use_private_ip"`
	Targets       []targetJSON                            `json:"targets,omitzero"`
}

// lbWire wraps a rendered load balancer for the wire.
func lbWire(lb schema.LoadBalancer) lbJSON {
	return lbJSON{LoadBalancer: lb, Targets: targetsWire(lb.Targets)}
}

func targetsWire(ts []schema.LoadBalancerTarget) []targetJSON {
	if ts == nil {
		return nil
	}
	out := make([]targetJSON, 0, len(ts))
	for _, t := range ts {
		out = append(out, targetJSON{Type: t.Type, Server: t.Server, LabelSelector: t.LabelSelector, IP: t.IP,
			HealthStatus: t.HealthStatus, UsePrivateIP: t.UsePrivateIP, Targets: targetsWire(t.Targets)})
	}
	return out
}
