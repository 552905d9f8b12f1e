package steps

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/siderolabs/talos/pkg/machinery/config/types/v1alpha1"

	"github.com/ohmytalos/ohmytalos/internal/doctor"
	"github.com/ohmytalos/ohmytalos/internal/sandbox/talosfake"
)

// withDefaultRoute routes 0.0.0.0/0 via the seed network's gateway on a
// private-only server's NIC (eth0: it has no public NIC), as an operator's
// machine.network.interfaces patch does.
func withDefaultRoute(t *testing.T, cfg []byte) []byte {
	t.Helper()
	b, err := patchMachineConfig(cfg, "route via 10.0.0.1", func(c *v1alpha1.Config) error {
		if c.MachineConfig.MachineNetwork == nil {
			c.MachineConfig.MachineNetwork = &v1alpha1.NetworkConfig{}
		}
		c.MachineConfig.MachineNetwork.NetworkInterfaces = append(c.MachineConfig.MachineNetwork.NetworkInterfaces,
			&v1alpha1.Device{DeviceInterface: "eth0", DeviceRoutes: []*v1alpha1.Route{{RouteNetwork: "0.0.0.0/0", RouteGateway: "10.0.0.1"}}})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestDoctorEgress: on the seed cluster every node routes through
// Hetzner's public gateway. Two private-only workers then join with the
// cluster's worker config, reached through a control plane's apid; the
// one whose config sets no default route fails egress (Hetzner's DHCP
// only routes the network's range since 2025-08-11), the one whose
// config routes via 10.0.0.1 passes.
func TestDoctorEgress(t *testing.T) {
	t.Parallel()
	c := appliedDoctorCluster(t)
	r := c.doctorResults(t, "egress")["egress"]
	if r.Status != doctor.StatusPass || !strings.Contains(strings.Join(r.Evidence, "\n"), "via 172.31.1.1 dev eth0") {
		t.Fatalf("egress on the seed cluster = %s, want pass via 172.31.1.1: %s", r.Status, describeResult(r))
	}
	var workerCfg []byte
	for _, s := range c.sb.HCloud.Servers() {
		if strings.Contains(s.Name, "worker") {
			workerCfg = []byte(s.UserData)
		}
	}
	if len(workerCfg) == 0 {
		t.Fatal("no worker server in the sandbox")
	}
	routed := withDefaultRoute(t, workerCfg)
	ctx := context.Background()
	for i, cfg := range [][]byte{workerCfg, routed} {
		n, err := c.sb.Talos.StartNode(ctx, talosfake.NodeOptions{ServerID: int64(9001 + i), Name: []string{"private-1", "private-2"}[i],
			PrivateIP: []string{"10.0.2.91", "10.0.2.92"}[i], NetworkCIDR: "10.0.0.0/16", MachineConfig: cfg})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(n.Stop)
	}
	dctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	env, closeSrc, _ := DoctorEnv(dctx, c.deps, c.env, DoctorOptions{})
	defer closeSrc()
	env.Workers = append(env.Workers, doctor.NodeRef{Name: "private-1", PrivateIP: "10.0.2.91"}, doctor.NodeRef{Name: "private-2", PrivateIP: "10.0.2.92"})
	r = doctor.Run(dctx, env, []string{"egress"}, nil)[0]
	all := strings.Join(r.Evidence, "\n") + "\n" + r.Fix
	for _, want := range []string{"private-1 has no public IPv4 and no IPv4 default route: since Hetzner's DHCP change of 2025-08-11",
		"private-2 (no public IPv4): IPv4 default route via 10.0.0.1 dev eth0", "route 0.0.0.0/0 via the network gateway 10.0.0.1 on eth0"} {
		if !strings.Contains(all, want) {
			t.Errorf("egress lacks %q: %s", want, describeResult(r))
		}
	}
	if r.Status != doctor.StatusFail || strings.Contains(strings.Join(r.Evidence, "\n"), "private-2 has no") {
		t.Errorf("egress = %s, want fail for private-1 only: %s", r.Status, describeResult(r))
	}
}
