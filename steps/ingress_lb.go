package steps

import (
	"context"
	"fmt"
	"strings"

	"github.com/hetznercloud/hcloud-go/v2/hcloud"

	"github.com/ohmytalos/ohmytalos/internal/addons"
	"github.com/ohmytalos/ohmytalos/internal/cloud"
	"github.com/ohmytalos/ohmytalos/internal/spec"
)

// keyIngressLB is the ingress load balancer's state key.
const keyIngressLB = "lb/ingress"

// ingressLBSpec is the ingress load balancer. With the ingress add-on on,
// ohmytalos owns its existence, type, location, network and labels, and
// the cloud controller its services and targets, for the ingress Service
// that names it (addons.IngressAnnotations). With it off, ohmytalos owns
// everything: TCP 80 and 443 to the pools with loadBalancer: true.
func ingressLBSpec(sp *spec.Spec, id string) lbSpec {
	key, name, labels := ingressLB(sp, id)
	lb := lbSpec{key: key, name: name, labels: labels,
		detail: sp.LoadBalancer.Type + ": 80, 443 -> pools with loadBalancer: true, over the private network",
		target: cloud.Selector(map[string]string{cloud.LabelCluster: sp.Name, cloud.LabelIngress: "true"}), ports: []int{80, 443}}
	if sp.Addons.Ingress.On() {
		lb.servicesBy = addons.IngressServiceRef()
		lb.detail = sp.LoadBalancer.Type + ", in the cluster network; services and targets: managed by the cloud controller for Service " + lb.servicesBy
	}
	return lb
}

// ingressNotes are the plan's notes on the ingress load balancer (lb is
// the live one, nil when it does not exist yet or was not read): that
// nothing answers behind it without the ingress add-on, and with domains
// the A and AAAA records the operator must create (AAAA only when the
// ingress serves IPv6, addons.IngressIPv6).
func ingressNotes(sp *spec.Spec, lb *hcloud.LoadBalancer) []string {
	name := addons.IngressLBName(sp)
	var out []string
	if !sp.Addons.Ingress.On() {
		out = append(out, fmt.Sprintf("nothing answers behind load balancer %s until an ingress runs: addons.ingress.enabled is false, so run your own ingress on the pools with loadBalancer: true, listening on 80 and 443", name))
	}
	if len(sp.Domains) == 0 {
		return out
	}
	v4, v6 := "the IPv4 of "+name+" (known once it exists: run plan again after apply)", ""
	ipv6 := sp.Addons.Ingress.On() // a Hetzner load balancer with a public interface gets an IPv6
	if lb != nil {
		v4, v6 = "none (the load balancer has no public IPv4)", ""
		if ip := lb.PublicNet.IPv4.IP; ip != nil {
			v4 = ip.String()
		}
		if ip := lb.PublicNet.IPv6.IP; ip != nil {
			v6 = ip.String()
		}
		ipv6 = addons.IngressIPv6(sp, v6)
	} else if ipv6 {
		v6 = "the IPv6 of " + name + " (known once it exists)"
	}
	for _, d := range sp.Domains {
		out = append(out, fmt.Sprintf("DNS: create A %s -> %s", d, v4))
		if ipv6 {
			out = append(out, fmt.Sprintf("DNS: create AAAA %s -> %s", d, v6))
		}
	}
	if !ipv6 {
		out = append(out, "DNS: create no AAAA record for "+strings.Join(sp.Domains, ", ")+": the ingress does not serve IPv6, and Let's Encrypt tries an AAAA address first")
	}
	return out
}

// doctorIngressIPv6 tells the doctor whether the ingress serves IPv6
// (addons.IngressIPv6, from the live ingress load balancer's address);
// nil when it cannot tell. One request, made only when there are domains
// to check.
func doctorIngressIPv6(ctx context.Context, c *hcloud.Client, sp *spec.Spec, domains []string) *bool {
	if len(domains) == 0 {
		return nil
	}
	v := false
	if !sp.Addons.Ingress.On() {
		return &v
	}
	lb, _, err := c.LoadBalancer.GetByName(ctx, addons.IngressLBName(sp))
	if err != nil || lb == nil {
		return nil
	}
	ip := ""
	if lb.PublicNet.IPv6.IP != nil {
		ip = lb.PublicNet.IPv6.IP.String()
	}
	v = addons.IngressIPv6(sp, ip)
	return &v
}
