package steps

import (
	"context"
	"strings"
	"testing"

	"github.com/ohmytalos/ohmytalos/internal/pricing"
	"github.com/ohmytalos/ohmytalos/internal/spec"
)

func TestCheckServerTypes(t *testing.T) {
	cat, err := pricing.Offline()
	if err != nil {
		t.Fatal(err)
	}
	if ps := CheckServerTypes(spec.Default("demo"), cat); len(ps) != 0 {
		t.Errorf("default spec: %v", ps)
	}
	s := spec.Default("demo")
	s.Pools[0].ServerType = "cpx99"
	s.ControlPlane.ServerType = "cx22"
	ps := CheckServerTypes(s, cat)
	if !ps.Has("pools[0].serverType") || !ps.Has("controlPlane.serverType") {
		t.Fatalf("problems = %v", ps)
	}
	for _, p := range ps {
		if p.Fix == "" || !strings.Contains(p.Reason, "c") {
			t.Errorf("problem without fix: %+v", p)
		}
	}
}

func TestVIPLinkFollowsThePublicNIC(t *testing.T) {
	s := spec.Default("demo")
	cases := []struct {
		ipv4, ipv6 bool
		override   string
		want       string
	}{
		{true, true, "", "eth1"},
		{false, true, "", "eth1"}, // an IPv6-only public NIC is still eth0
		{false, false, "", "eth0"},
		{true, true, "ens10", "ens10"},
	}
	for _, c := range cases {
		s.PublicNetwork = &spec.PublicNetwork{IPv4: c.ipv4, IPv6: c.ipv6}
		s.ControlPlane.VIPLink = c.override
		if got := vipLink(s); got != c.want {
			t.Errorf("ipv4=%v ipv6=%v override=%q: %s, want %s", c.ipv4, c.ipv6, c.override, got, c.want)
		}
	}
}

// TestRenderedVIPLinkIPv6Only renders the control plane config of a spec
// whose servers have only a public IPv6: the private NIC is still eth1, and
// that is where the config must put the VIP.
func TestRenderedVIPLinkIPv6Only(t *testing.T) {
	t.Parallel()
	w := newWorld(t, "../examples/seed.yaml")
	w.Spec.PublicNetwork = &spec.PublicNetwork{IPv4: false, IPv6: true}
	rendered, err := RenderConfigs(context.Background(), w.deps(), w.env(t))
	if err != nil {
		t.Fatal(err)
	}
	cp := string(rendered[spec.RoleControlPlane].Config)
	if !strings.Contains(cp, "kind: HCloudVIPConfig") || !strings.Contains(cp, "link: eth1") {
		t.Errorf("VIP not on eth1 for an IPv6-only public NIC:\n%s", cp)
	}
}
