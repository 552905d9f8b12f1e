package talos

import (
	"errors"
	"fmt"
	"maps"
	"strings"
	"testing"

	"github.com/siderolabs/talos/pkg/machinery/config/types/network"
)

func TestRenderVIPLink(t *testing.T) {
	b := testBundle(t)

	cases := []struct {
		name   string
		link   string
		public bool
		want   string
	}{
		{"default behind a public NIC", "", true, "eth1"},
		{"private-only server", "", false, "eth0"},
		{"override", "enp7s0", true, "enp7s0"},
	}

	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := testCluster()
			c.VIPLink, c.PublicIPv4 = tc.link, tc.public

			_, d := render(t, b, c, controlPlaneGroup())

			vips := find[*network.HCloudVIPConfigV1Alpha1](d)
			if len(vips) != 1 || vips[0].Link() != tc.want {
				t.Fatalf("VIP link = %+v, want %s", vips, tc.want)
			}
		})
	}
}

func TestRenderUserLabelsOverrideDefaults(t *testing.T) {
	g := workerGroup()
	g.Labels = map[string]string{LabelLonghornCreateDefaultDisk: "true"}

	_, d := render(t, testBundle(t), testCluster(), g)

	if got := d.v1.MachineConfig.MachineNodeLabels[LabelLonghornCreateDefaultDisk]; got != "true" {
		t.Errorf("pool label did not override the default: %q", got)
	}
}

func TestRenderTooLarge(t *testing.T) {
	g := workerGroup()
	g.Labels = map[string]string{}

	for i := range 700 {
		g.Labels[fmt.Sprintf("example.com/label-%04d", i)] = strings.Repeat("v", 40)
	}

	_, err := Render(testBundle(t), testCluster(), g)
	if !errors.Is(err, ErrConfigTooLarge) {
		t.Fatalf("want ErrConfigTooLarge, got %v", err)
	}

	if !strings.Contains(err.Error(), `pool "worker"`) || !strings.Contains(err.Error(), "32768") {
		t.Errorf("error does not name the pool and the limit: %v", err)
	}
}

func TestRenderErrors(t *testing.T) {
	b := testBundle(t)

	cases := []struct {
		name   string
		mutate func(*Cluster, *NodeGroup)
		want   string
	}{
		{"no passphrase", func(c *Cluster, _ *NodeGroup) { c.DiskPassphrase = "" }, "passphrase"},
		{"vip without token", func(c *Cluster, _ *NodeGroup) { c.HCloudToken = "" }, "token"},
		{"vip not an IP", func(c *Cluster, _ *NodeGroup) { c.VIP = "vip.example.com" }, "VIP"},
		{"endpoint with scheme", func(c *Cluster, _ *NodeGroup) { c.Endpoint = "https://10.0.1.100:6443" }, "endpoint"},
		{"bad pod CIDR", func(c *Cluster, _ *NodeGroup) { c.PodCIDR = "10.42.0.0" }, "pod CIDR"},
		{"old talos", func(c *Cluster, _ *NodeGroup) { c.TalosVersion = "v1.10.0" }, "v1.12"},
		{"no kubernetes version", func(c *Cluster, _ *NodeGroup) { c.KubernetesVersion = "v" }, "kubernetes version"},
		{"bad role", func(_ *Cluster, g *NodeGroup) { g.Role = "master" }, "role"},
		{"no installer", func(_ *Cluster, g *NodeGroup) { g.Installer = "" }, "installer"},
		{"storage behind the LB", func(_ *Cluster, g *NodeGroup) { g.Storage, g.LoadBalancer = true, true }, "load balancer"},
		{"taint without effect", func(_ *Cluster, g *NodeGroup) { g.Taints = []string{"a=b"} }, "effect"},
		{"taint bad effect", func(_ *Cluster, g *NodeGroup) { g.Taints = []string{"a=b:Sometimes"} }, "taint"},
		{"bad label key", func(_ *Cluster, g *NodeGroup) { g.Labels = map[string]string{"bad key!": "x"} }, "node labels"},
	}

	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c, g := testCluster(), workerGroup()
			g.LoadBalancer = false
			tc.mutate(&c, &g)

			_, err := Render(b, c, g)
			if err == nil {
				t.Fatal("want an error")
			}

			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %q does not mention %q", err, tc.want)
			}

			for _, secret := range []string{testHCloudToken, testTSKey, testPassphrase} {
				if strings.Contains(err.Error(), secret) {
					t.Errorf("error leaks a secret: %q", err)
				}
			}
		})
	}

	if _, err := Render(nil, testCluster(), workerGroup()); err == nil {
		t.Error("nil bundle: want an error")
	}
}

func TestRenderControlPlaneTaints(t *testing.T) {
	g := controlPlaneGroup()
	g.Taints = []string{"dedicated=etcd:NoExecute"}

	_, d := render(t, testBundle(t), testCluster(), g)

	if got := d.v1.MachineConfig.MachineNodeTaints; !maps.Equal(got, map[string]string{"dedicated": "etcd:NoExecute"}) {
		t.Errorf("control plane machine.nodeTaints = %v", got)
	}

	if _, ok := d.v1.MachineConfig.MachineKubelet.KubeletExtraConfig.Object["registerWithTaints"]; ok {
		t.Error("control plane taints also went to registerWithTaints")
	}
}

func TestRenderValidationErrorIsFlat(t *testing.T) {
	g := workerGroup()
	g.Labels = map[string]string{"bad key!": "x", "good-key": "bad value!"}

	_, err := Render(testBundle(t), testCluster(), g)

	var verr *ValidationError
	if !errors.As(err, &verr) {
		t.Fatalf("want a *ValidationError, got %T: %v", err, err)
	}

	if len(verr.Problems) != 2 {
		t.Fatalf("want 2 problems, got %q", verr.Problems)
	}

	joined := strings.Join(verr.Problems, "\n")
	for _, want := range []string{"node labels", "bad key!", "bad value!"} {
		if !strings.Contains(joined, want) {
			t.Errorf("problems %q do not mention %q", verr.Problems, want)
		}
	}

	for _, p := range verr.Problems {
		if strings.Contains(p, "\n") || strings.Contains(p, "error occurred") {
			t.Errorf("problem is not flat: %q", p)
		}
	}
}

// TestRenderConcurrent renders all groups in parallel from one bundle, as a
// step may do, and expects the sequential bytes (run with -race).
func TestRenderConcurrent(t *testing.T) {
	b := testBundle(t)
	groups := []NodeGroup{controlPlaneGroup(), workerGroup(), storageGroup()}

	want := make([][]byte, len(groups))

	for i, g := range groups {
		r, err := Render(b, testCluster(), g)
		if err != nil {
			t.Fatal(err)
		}

		want[i] = r.Config
	}

	got := make([][]byte, len(groups))
	errs := make([]error, len(groups))
	done := make(chan struct{})

	for i, g := range groups {
		go func() {
			defer func() { done <- struct{}{} }()

			r, err := Render(b, testCluster(), g)
			got[i], errs[i] = r.Config, err
		}()
	}

	for range groups {
		<-done
	}

	for i := range groups {
		if errs[i] != nil {
			t.Fatal(errs[i])
		}

		if string(got[i]) != string(want[i]) {
			t.Errorf("pool %s: concurrent render differs from the sequential one", groups[i].Pool)
		}
	}
}

// A cluster without workers lets workloads onto the control planes; with
// workers Talos' default (no scheduling on control planes) stays.
func TestRenderScheduleOnControlPlanes(t *testing.T) {
	_, d := render(t, testBundle(t), testCluster(), controlPlaneGroup())
	if v := d.v1.ClusterConfig.AllowSchedulingOnControlPlanes; v != nil && *v {
		t.Error("workers exist, yet control planes allow scheduling")
	}

	c := testCluster()
	c.ScheduleOnControlPlanes = true
	_, d = render(t, testBundle(t), c, controlPlaneGroup())
	if v := d.v1.ClusterConfig.AllowSchedulingOnControlPlanes; v == nil || !*v {
		t.Error("cluster.allowSchedulingOnControlPlanes not set for a cluster without workers")
	}
}
