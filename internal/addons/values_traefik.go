package addons

import (
	"github.com/ohmytalos/ohmytalos/internal/charts"
	"github.com/ohmytalos/ohmytalos/internal/spec"
)

// TraefikValues are the traefik chart's values (keys: traefik/
// traefik-helm-chart traefik/values.yaml and templates/_service.tpl; read
// at v41.3.0, the newest stored, same major as the pinned 41.6.0:
// service.spec carries type and the IP families). The Service is bound to
// the ingress load balancer ohmytalos created, through the cloud
// controller's annotations.
func TraefikValues(sp *spec.Spec, in Inputs) []charts.Value {
	ipv6 := IngressIPv6(sp, in.IngressLBIPv6)
	ann := map[string]any{}
	for k, v := range IngressAnnotations(sp, ipv6) {
		ann[k] = v
	}
	policy, families := IngressIPFamilies(ipv6)
	return []charts.Value{
		set("deployment.kind", "Deployment", "a Deployment behind the load balancer; the cloud controller targets every node not excluded from it"),
		set("deployment.replicas", upTo(LBNodes(sp), 2), "two replicas when two load balancer nodes can carry them, so a drain keeps the ingress serving"),
		need("service.spec.type", "LoadBalancer", "the cloud controller manages the load balancer's services and targets for this Service"),
		need("service.annotations", ann, "adopt the ingress load balancer ohmytalos created (by name, location and type), targets by private IP behind the firewall"+ipv6Why(ipv6)),
		set("service.spec.ipFamilyPolicy", policy, "IPv6 only when the load balancer has it and domains are set (IngressIPv6); PreferDualStack, as a single-stack cluster refuses RequireDualStack"),
		set("service.spec.ipFamilies", families, "the families the Service offers, following the load balancer's"),
	}
}

func ipv6Why(ipv6 bool) string {
	if ipv6 {
		return ""
	}
	return "; no IPv6 in the Service status, so no AAAA record points where nothing listens (field notes pitfall 7)"
}

// LBNodes counts the nodes of the pools behind the ingress load balancer
// (loadBalancer: true).
func LBNodes(sp *spec.Spec) int {
	n := 0
	for _, p := range sp.Pools {
		if p.InLoadBalancer() {
			n += p.Count
		}
	}
	return n
}
