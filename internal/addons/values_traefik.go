package addons

import (
	"github.com/ohmytalos/ohmytalos/internal/charts"
	"github.com/ohmytalos/ohmytalos/internal/spec"
)

// Annotations of the Hetzner cloud controller on a LoadBalancer Service
// (hetznercloud/hcloud-cloud-controller-manager v1.35.0
// internal/annotation/load_balancer.go). With LBName set the controller
// adopts the existing load balancer of that name (hcloud/load_balancers.go
// GetLoadBalancerName; internal/hcops/load_balancer.go GetByName).
const (
	annLBName         = "load-balancer.hetzner.cloud/name"
	annLBLocation     = "load-balancer.hetzner.cloud/location"
	annLBType         = "load-balancer.hetzner.cloud/type"
	annLBPrivateIP    = "load-balancer.hetzner.cloud/use-private-ip"
	annLBIPv6Disabled = "load-balancer.hetzner.cloud/ipv6-disabled"
)

// IngressLoadBalancerName is the name of the ingress load balancer
// ohmytalos creates (steps/pools.go ingressLB: CLUSTER-ingress).
func IngressLoadBalancerName(sp *spec.Spec) string { return sp.Name + "-ingress" }

// TraefikValues are the traefik chart's values (keys: traefik/
// traefik-helm-chart traefik/values.yaml and templates/_service.tpl; read
// at v41.3.0, the newest stored, same major as the pinned 41.6.0:
// service.spec carries type and the IP families). The Service is bound to
// the ingress load balancer ohmytalos created, through the cloud
// controller's annotations.
func TraefikValues(sp *spec.Spec, _ Inputs) []charts.Value {
	ann := map[string]any{
		annLBName:      IngressLoadBalancerName(sp),
		annLBLocation:  sp.LoadBalancer.Location,
		annLBType:      sp.LoadBalancer.Type,
		annLBPrivateIP: "true",
	}
	ipv6 := sp.PublicNetwork != nil && sp.PublicNetwork.IPv6
	if !ipv6 {
		ann[annLBIPv6Disabled] = "true"
	}
	out := []charts.Value{
		set("deployment.kind", "Deployment", "a Deployment behind the load balancer; the cloud controller targets every node not excluded from it"),
		set("deployment.replicas", upTo(lbNodes(sp), 2), "two replicas when two load balancer nodes can carry them, so a drain keeps the ingress serving"),
		need("service.spec.type", "LoadBalancer", "the cloud controller manages the load balancer's services and targets for this Service"),
		need("service.annotations", ann, "adopt the ingress load balancer ohmytalos created (by name, location and type), targets by private IP behind the firewall"+ipv6Why(ipv6)),
	}
	if ipv6 {
		out = append(out, set("service.spec.ipFamilyPolicy", "PreferDualStack",
			"IPv6 where the cluster has it; an IPv4-only cluster keeps IPv4, the load balancer's public IPv6 forwards to the nodes' private IPv4"))
	}
	return out
}

func ipv6Why(ipv6 bool) string {
	if ipv6 {
		return ""
	}
	return "; no IPv6 in the Service status, so no AAAA record points where nothing listens (field notes pitfall 7)"
}

// lbNodes counts the nodes of the pools behind the load balancer.
func lbNodes(sp *spec.Spec) int {
	n := 0
	for _, p := range sp.Pools {
		if p.InLoadBalancer() {
			n += p.Count
		}
	}
	return n
}
