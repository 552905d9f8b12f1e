package doctor

import (
	"context"
	"errors"
	"testing"
)

func egressCluster() (*Env, *fakeTalos) {
	env, ft := healthyCluster()
	env.NetworkCIDR = "10.0.0.0/16"
	ft.routes = map[string][]Route{}
	for _, n := range append(append([]NodeRef{}, env.ControlPlanes...), env.Workers...) {
		ft.routes[n.PrivateIP] = []Route{
			{Family: "inet4", Gateway: "172.31.1.1", Link: "eth0"},
			{Family: "inet4", Destination: "10.0.0.0/16", Gateway: "10.0.0.1", Link: "eth1"},
			{Family: "inet6", Gateway: "fe80::1", Link: "eth0"},
		}
	}
	return env, ft
}

func TestEgress(t *testing.T) {
	ctx := context.Background()
	env, _ := egressCluster()
	expect(t, checkEgress(ctx, env), StatusPass, "cp-1 (public IPv4 203.0.113.1): IPv4 default route via 172.31.1.1 dev eth0")

	// A private-only worker whose config sets no route: Hetzner's DHCP
	// gives it the network route only.
	env, ft := egressCluster()
	env.Workers = append(env.Workers, NodeRef{Name: "worker-2", PrivateIP: "10.0.2.2"})
	ft.routes["10.0.2.2"] = []Route{{Family: "inet4", Destination: "10.0.0.0/16", Gateway: "10.0.0.1", Link: "eth0"}}
	expect(t, checkEgress(ctx, env), StatusFail, "worker-2 has no public IPv4 and no IPv4 default route", "2025-08-11",
		"route 0.0.0.0/0 via the network gateway 10.0.0.1 on eth0", "NAT gateway")

	ft.routes["10.0.2.2"] = append(ft.routes["10.0.2.2"], Route{Family: "inet4", Gateway: "10.0.2.254", Link: "eth0"})
	expect(t, checkEgress(ctx, env), StatusFail, "its IPv4 default route (via 10.0.2.254 dev eth0) is not via the network gateway 10.0.0.1")

	ft.routes["10.0.2.2"] = append(ft.routes["10.0.2.2"][:1], Route{Family: "inet4", Destination: "0.0.0.0/0", Gateway: "10.0.0.1", Link: "eth0"})
	expect(t, checkEgress(ctx, env), StatusPass, "worker-2 (no public IPv4): IPv4 default route via 10.0.0.1 dev eth0")

	env, ft = egressCluster()
	ft.routes["10.0.1.2"] = ft.routes["10.0.1.2"][1:]
	expect(t, checkEgress(ctx, env), StatusFail, "cp-2 has a public IPv4 but no IPv4 default route", "172.31.1.1")

	env, ft = egressCluster()
	ft.errs["10.0.2.1"] = errors.New("connection refused")
	expect(t, checkEgress(ctx, env), StatusWarn, "worker-1: routes unreadable: connection refused")

	expect(t, checkEgress(ctx, &Env{}), StatusSkip, "Talos API")
}
