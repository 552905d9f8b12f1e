package addons

import (
	"slices"
	"testing"

	"github.com/ohmytalos/ohmytalos/internal/spec"
)

func ingressSpec(t *testing.T, domains ...string) *spec.Spec {
	t.Helper()
	sp := &spec.Spec{Name: "demo", Location: "fsn1", Domains: domains}
	sp.Default()
	return sp
}

func TestIngressIPv6NeedsTheLoadBalancersAddressAndDomains(t *testing.T) {
	off := false
	noIngress := ingressSpec(t, "app.example.com")
	noIngress.Addons.Ingress.Enabled = &off
	cases := []struct {
		name string
		sp   *spec.Spec
		ipv6 string
		want bool
	}{
		{"domains and an IPv6", ingressSpec(t, "app.example.com"), "2001:db8::1", true},
		{"no IPv6 on the load balancer", ingressSpec(t, "app.example.com"), "", false},
		{"no domains", ingressSpec(t), "2001:db8::1", false},
		{"ingress off", noIngress, "2001:db8::1", false},
	}
	for _, c := range cases {
		if got := IngressIPv6(c.sp, c.ipv6); got != c.want {
			t.Errorf("%s: IngressIPv6 = %v, want %v", c.name, got, c.want)
		}
	}
}

func TestIngressAnnotationsBindOurLoadBalancer(t *testing.T) {
	sp := ingressSpec(t, "app.example.com")
	a := IngressAnnotations(sp, false)
	want := map[string]string{AnnLBName: "demo-ingress", AnnLBLocation: "fsn1", AnnLBType: "lb11", AnnLBUsePrivateIP: "true", AnnLBIPv6Disabled: "true"}
	for k, v := range want {
		if a[k] != v {
			t.Errorf("%s = %q, want %q", k, a[k], v)
		}
	}
	if IngressAnnotations(sp, true)[AnnLBIPv6Disabled] != "false" {
		t.Error("with IPv6 the Service must report the load balancer's IPv6")
	}
	if p, f := IngressIPFamilies(true); p != "PreferDualStack" || !slices.Equal(f, []string{"IPv4", "IPv6"}) {
		t.Errorf("IPv6 families = %s %v", p, f)
	}
	if p, f := IngressIPFamilies(false); p != "SingleStack" || !slices.Equal(f, []string{"IPv4"}) {
		t.Errorf("IPv4 families = %s %v", p, f)
	}
}
