package spec

import (
	"strings"
	"testing"
)

func TestAccessDefaults(t *testing.T) {
	s := Default("d")
	if s.Endpoint.Access != AccessPublic {
		t.Errorf("endpoint.access = %q, want public", s.Endpoint.Access)
	}
	if len(s.Firewall.Allow) != 0 || s.OpenToInternet() {
		t.Errorf("firewall.allow defaults to %v: it must stay empty (the operator's detected address)", s.Firewall.Allow)
	}
	lb, err := Parse([]byte("name: d\nendpoint: {mode: loadbalancer}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if lb.Endpoint.Access != "" {
		t.Errorf("loadbalancer mode got access %q", lb.Endpoint.Access)
	}
	open, err := Parse([]byte("name: d\nfirewall: {allow: [0.0.0.0/0]}\n"))
	if err != nil || !open.OpenToInternet() {
		t.Errorf("explicit 0.0.0.0/0: open=%v err=%v", open != nil && open.OpenToInternet(), err)
	}
}

func TestAccessProblems(t *testing.T) {
	cases := []struct{ name, yaml, field, reason string }{
		{"unknown access", "name: d\nendpoint: {access: vpn}\n", "endpoint.access", "not an access mode"},
		{"tailscale without key", "name: d\nendpoint: {access: tailscale}\n", "endpoint.access", "secrets.tailscaleAuthKey"},
		{"access with lb", "name: d\nendpoint: {mode: loadbalancer, access: public}\n", "endpoint.access", "only for endpoint.mode vip"},
		{"echo url", "name: d\nfirewall: {ipEchoURL: 'ftp://x'}\n", "firewall.ipEchoURL", "not an http(s) URL"},
		{"echo url in clear", "name: d\nfirewall: {ipEchoURL: 'http://ifconfig.example/ip'}\n", "firewall.ipEchoURL", "plain http to another machine"},
		{"operator address", "name: d\nfirewall: {operatorAddress: 'my-laptop'}\n", "firewall.operatorAddress", `"my-laptop" is not an IP address or CIDR`},
		{"operator address bad entry", "name: d\nfirewall: {operatorAddress: '203.0.113.7, 2001:db8::/129'}\n", "firewall.operatorAddress", `"2001:db8::/129" is not an IP address or CIDR`},
		{"operator address unspecified", "name: d\nfirewall: {operatorAddress: '0.0.0.0'}\n", "firewall.operatorAddress", "not a host address"},
		{"operator address empty list", "name: d\nfirewall: {operatorAddress: ' , '}\n", "firewall.operatorAddress", "names no address"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ps := parseProblems(t, c.yaml)
			for _, p := range ps {
				if p.Field == c.field && strings.Contains(p.Reason, c.reason) && p.Fix != "" {
					return
				}
			}
			t.Errorf("no %s problem with %q in %v", c.field, c.reason, ps)
		})
	}
	ok := "name: d\nendpoint: {access: tailscale}\nsecrets: {tailscaleAuthKey: {provider: env, ref: TS_KEY}}\nfirewall: {ipEchoURL: 'http://127.0.0.1:1/ip, https://api6.ipify.org', operatorAddress: '203.0.113.7, 2001:db8::/64'}\n"
	if _, err := Parse([]byte(ok)); err != nil {
		t.Errorf("valid tailscale spec: %v", err)
	}
}
