package addons

import (
	"github.com/ohmytalos/ohmytalos/internal/spec"
)

// The ingress add-on's Service. The traefik chart names its default
// Service after the release when the release name contains the chart's
// (traefik/traefik-helm-chart traefik/templates/_helpers.tpl,
// "traefik.fullname"), so release traefik in namespace traefik serves
// Service traefik/traefik.
const (
	IngressNamespace = "traefik"
	IngressService   = "traefik"
)

// IngressServiceRef is the ingress Service as NAMESPACE/NAME, the owner
// of the ingress load balancer's services and targets.
func IngressServiceRef() string { return IngressNamespace + "/" + IngressService }

// IngressLBName is the name of the ingress load balancer ohmytalos
// creates, and the name the cloud controller adopts it by.
func IngressLBName(sp *spec.Spec) string { return sp.Name + "-ingress" }

// The hcloud cloud controller's Service annotations that bind a Service
// to the ingress load balancer
// (hetznercloud/hcloud-cloud-controller-manager internal/annotation/load_balancer.go).
const (
	// AnnLBName: EnsureLoadBalancer looks the load balancer up by the
	// hcloud-ccm/service-uid label, then by this name, and adopts what it
	// finds ("import of load balancers which were created by other
	// means", hcloud/load_balancers.go); changeHCLBInfo renames the load
	// balancer to it, so it must be ohmytalos's name.
	AnnLBName = "load-balancer.hetzner.cloud/name"
	// AnnLBLocation is used only when the controller creates the load
	// balancer (LoadBalancerOps.Create; "changing the location after the
	// load balancer was created has no effect").
	AnnLBLocation = "load-balancer.hetzner.cloud/location"
	// AnnLBType: changeType moves the load balancer to this type when set
	// and leaves it alone when unset; set to the spec's type, both owners
	// agree.
	AnnLBType = "load-balancer.hetzner.cloud/type"
	// AnnLBUsePrivateIP makes the server targets use the private network:
	// the nodes' public addresses are firewalled.
	AnnLBUsePrivateIP = "load-balancer.hetzner.cloud/use-private-ip"
	// AnnLBIPv6Disabled keeps the load balancer's IPv6 out of the
	// Service's status, so external-dns publishes no AAAA record
	// (getIPv6Enabled in hcloud/load_balancers.go).
	AnnLBIPv6Disabled = "load-balancer.hetzner.cloud/ipv6-disabled"
)

// IngressIPv6 reports whether the ingress serves IPv6: the add-on is on,
// the load balancer has a public IPv6 (lbIPv6, "" when unknown) and the
// spec lists domains, for which the operator publishes AAAA records
// (plan lists them). Traefik's Service values and the annotations
// (IngressAnnotations, IngressIPFamilies) and the dns-ipv6 check follow
// it, so an AAAA record never points where nothing listens (field notes,
// pitfall 7).
func IngressIPv6(sp *spec.Spec, lbIPv6 string) bool {
	return sp.Addons.Ingress.On() && lbIPv6 != "" && len(sp.Domains) > 0
}

// IngressAnnotations are the annotations of the ingress Service: the
// cloud controller adopts ohmytalos's load balancer by name, keeps its
// type, targets the nodes over the private network, and reports the IPv6
// in the Service's status only when ipv6 (IngressIPv6).
func IngressAnnotations(sp *spec.Spec, ipv6 bool) map[string]string {
	disabled := "true"
	if ipv6 {
		disabled = "false"
	}
	return map[string]string{
		AnnLBName:         IngressLBName(sp),
		AnnLBLocation:     sp.LoadBalancer.Location,
		AnnLBType:         sp.LoadBalancer.Type,
		AnnLBUsePrivateIP: "true",
		AnnLBIPv6Disabled: disabled,
	}
}

// IngressIPFamilies is the ingress Service's ipFamilyPolicy and
// ipFamilies. With IPv6, PreferDualStack: a single-stack cluster (the
// default service range is IPv4 only) still admits the Service with its
// IPv4 family, where RequireDualStack would be refused by the API server.
// The load balancer reaches the nodes over IPv4 on the private network
// either way; the families decide what the cluster itself offers.
func IngressIPFamilies(ipv6 bool) (policy string, families []string) {
	if ipv6 {
		return "PreferDualStack", []string{"IPv4", "IPv6"}
	}
	return "SingleStack", []string{"IPv4"}
}

// ingress is the ingress add-on: its objects all come from the traefik
// chart (no typed object), so it renders only the workload the apply
// waits for, the Deployment the values ask for (TraefikValues).
func ingress(sp *spec.Spec) Addon {
	a, _ := specAddon(sp, "ingress")
	return Addon{Name: ingressAddon, Version: a.Version, Workloads: []Workload{{"Deployment", IngressNamespace, IngressService}}}
}
