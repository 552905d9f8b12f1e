package doctor

import (
	"context"
	"errors"
	"testing"
)

func TestVIPLinkPass(t *testing.T) {
	env, _ := healthyCluster()
	expect(t, checkVIPLink(context.Background(), env), StatusPass, `cp-1: VIP 10.0.1.100 on link "eth1"`)
}

func TestVIPLinkMissingInterface(t *testing.T) {
	env, ft := healthyCluster()
	for _, cp := range env.ControlPlanes {
		ft.vipLink[cp.PrivateIP] = "enp7s0" // the Debian name of the private NIC
	}
	env.VIPLink = "enp7s0"
	r := checkVIPLink(context.Background(), env)
	expect(t, r, StatusFail, `cp-2: link "enp7s0" does not exist`, "links present: eth0, eth1, lo", `set the VIP link of cp-1, cp-2, cp-3 to "eth1"`, "silently ignores", "localhost:7445")
}

func TestVIPLinkOnPublicLink(t *testing.T) {
	env, ft := healthyCluster()
	ft.vipLink["10.0.1.2"] = "eth0"
	expect(t, checkVIPLink(context.Background(), env), StatusFail, `cp-2: link "eth0" is not the private link (eth1)`)
}

func TestVIPLinkSkipsAndErrors(t *testing.T) {
	env, ft := healthyCluster()
	env.Talos = nil
	expect(t, checkVIPLink(context.Background(), env), StatusSkip, "no talosconfig")
	env.Talos = ft
	ft.errs["10.0.1.1"] = errors.New("connection refused")
	expect(t, checkVIPLink(context.Background(), env), StatusError, "connection refused")
}

func TestVIPClaimed(t *testing.T) {
	env, ft := healthyCluster()
	expect(t, checkVIPClaimed(context.Background(), env), StatusPass, "cp-1 holds 10.0.1.100 on eth1")

	ft.addrs["10.0.1.1"] = ft.addrs["10.0.1.1"][:2]
	expect(t, checkVIPClaimed(context.Background(), env), StatusFail, "no control plane (cp-1, cp-2, cp-3) has 10.0.1.100 assigned", "etcd is healthy")

	ft.addrs["10.0.1.1"] = append(ft.addrs["10.0.1.1"], Address{Link: "eth1", CIDR: "10.0.1.100/32"})
	ft.addrs["10.0.1.3"] = append(ft.addrs["10.0.1.3"], Address{Link: "eth1", CIDR: "10.0.1.100/32"})
	expect(t, checkVIPClaimed(context.Background(), env), StatusFail, "assigned on 2 control planes", "cp-3 holds")
}
