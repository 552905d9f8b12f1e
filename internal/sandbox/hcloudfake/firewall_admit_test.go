package hcloudfake_test

import (
	"net"
	"net/netip"
	"testing"

	"github.com/hetznercloud/hcloud-go/v2/hcloud"
)

func TestFirewallAdmitsDeniesByDefault(t *testing.T) {
	e, c := newPlainEnv(t)
	srv := e.newServer(t, hcloud.ServerCreateOpts{Name: "cp-1", Labels: map[string]string{"role": "cp"}})
	other := e.newServer(t, hcloud.ServerCreateOpts{Name: "w-1"})
	me, stranger := netip.MustParseAddr("203.0.113.7"), netip.MustParseAddr("198.51.100.1")
	v6 := netip.MustParseAddr("2001:db8::5")

	if !e.fake.FirewallAdmits(srv.ID, stranger, 50000) {
		t.Fatal("a server without a firewall must receive everything")
	}
	fw, _, err := c.Firewall.Create(ctx(t), hcloud.FirewallCreateOpts{Name: "cluster",
		ApplyTo: []hcloud.FirewallResource{{Type: hcloud.FirewallResourceTypeLabelSelector,
			LabelSelector: &hcloud.FirewallResourceLabelSelector{Selector: "role=cp"}}}})
	if err != nil {
		t.Fatal(err)
	}
	if e.fake.FirewallAdmits(srv.ID, me, 50000) {
		t.Fatal("a firewall without rules must drop everything")
	}
	if !e.fake.FirewallAdmits(other.ID, stranger, 50000) {
		t.Fatal("the label selector does not match w-1: it must receive everything")
	}
	rules := []hcloud.FirewallRule{
		{Direction: hcloud.FirewallRuleDirectionIn, Protocol: hcloud.FirewallRuleProtocolTCP, Port: hcloud.Ptr("50000"),
			SourceIPs: cidrs(t, "203.0.113.7/32")},
		{Direction: hcloud.FirewallRuleDirectionIn, Protocol: hcloud.FirewallRuleProtocolTCP, Port: hcloud.Ptr("6000-7000"),
			SourceIPs: cidrs(t, "203.0.113.0/24", "2001:db8::/64")},
		{Direction: hcloud.FirewallRuleDirectionIn, Protocol: hcloud.FirewallRuleProtocolUDP, Port: hcloud.Ptr("any"),
			SourceIPs: cidrs(t, "0.0.0.0/0")},
		{Direction: hcloud.FirewallRuleDirectionOut, Protocol: hcloud.FirewallRuleProtocolTCP, Port: hcloud.Ptr("any"),
			DestinationIPs: cidrs(t, "0.0.0.0/0")},
	}
	acts, _, err := c.Firewall.SetRules(ctx(t), fw.Firewall, hcloud.FirewallSetRulesOpts{Rules: rules})
	if err != nil {
		t.Fatal(err)
	}
	e.wait(t, acts...)
	for _, tc := range []struct {
		remote netip.Addr
		port   int
		want   bool
	}{
		{me, 50000, true},
		{stranger, 50000, false},
		{me, 6443, true},
		{v6, 6443, true},
		{v6, 50000, false},
		{me, 22, false},
		{stranger, 53, false}, // only UDP is open to everyone
		{netip.MustParseAddr("::ffff:203.0.113.7"), 50000, true},
	} {
		if got := e.fake.FirewallAdmits(srv.ID, tc.remote, tc.port); got != tc.want {
			t.Errorf("FirewallAdmits(%s, %d) = %v, want %v", tc.remote, tc.port, got, tc.want)
		}
	}
	if e.fake.FirewallAdmits(999999, me, 50000) {
		t.Error("an unknown server admits nothing")
	}
	_, _, err = c.Firewall.SetRules(ctx(t), fw.Firewall, hcloud.FirewallSetRulesOpts{Rules: []hcloud.FirewallRule{{
		Direction: hcloud.FirewallRuleDirectionIn, Protocol: hcloud.FirewallRuleProtocolTCP, Port: hcloud.Ptr("7000-6000"),
		SourceIPs: cidrs(t, "0.0.0.0/0")}}})
	if err == nil {
		t.Error("a reversed port range must be refused")
	}
}

func cidrs(t *testing.T, ss ...string) []net.IPNet {
	t.Helper()
	var out []net.IPNet
	for _, s := range ss {
		out = append(out, *mustCIDR(t, s))
	}
	return out
}
