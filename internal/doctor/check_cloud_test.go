package doctor

import (
	"github.com/ohmytalos/ohmytalos/internal/cloud"

	"context"
	"testing"
	"time"
)

func workerLB(resolved ...LBResolved) LoadBalancer {
	return LoadBalancer{Name: "prod-ingress", Labels: map[string]string{"ohmytalos.io/cluster": "prod"},
		Targets: []LBTarget{{Type: "label_selector", Selector: "ohmytalos.io/pool=worker", Resolved: resolved}}}
}

func TestLBTargetsPass(t *testing.T) {
	env := &Env{Cloud: &fakeCloud{lbs: []LoadBalancer{workerLB(LBResolved{ServerName: "worker-1", Health: "healthy"})}}}
	expect(t, checkLBTargets(context.Background(), env), StatusPass, "prod-ingress: 1 configured target(s), 1 resolved server(s): worker-1 (healthy)")
}

func TestLBTargetsSelectorMatchesNothing(t *testing.T) {
	cloud := &fakeCloud{lbs: []LoadBalancer{workerLB()}, servers: []Server{
		{Name: "cp-1", Labels: map[string]string{"ohmytalos.io/pool": "control-plane"}},
		{Name: "worker-1", Labels: map[string]string{"ohmytalos.io/pool": "workers"}},
	}}
	env := &Env{Cloud: cloud}
	expect(t, checkLBTargets(context.Background(), env), StatusFail,
		"prod-ingress has no targets", `"ohmytalos.io/pool=worker" of prod-ingress matches none of the cluster's 2 servers`, "Empty reply from server")
}

func TestLBTargetsOnlyExcludedControlPlanes(t *testing.T) {
	ccm := LoadBalancer{Name: "a1b2c3", Labels: map[string]string{LabelCCMServiceUID: "1b2c3"}}
	kube := &fakeKube{nodes: []KubeNode{
		{Name: "cp-1", Labels: map[string]string{LabelExcludeFromLB: "", "node-role.kubernetes.io/control-plane": ""}},
		{Name: "cp-2", Labels: map[string]string{LabelExcludeFromLB: ""}},
	}}
	env := &Env{Cloud: &fakeCloud{lbs: []LoadBalancer{ccm}}, Kube: kube}
	expect(t, checkLBTargets(context.Background(), env), StatusFail,
		"a1b2c3 has no targets", "Every Kubernetes node (cp-1, cp-2) carries node.kubernetes.io/exclude-from-external-load-balancers", "no worker has joined", "add or repair a worker pool")

	// Once a worker exists, the CCM should have added it: different cause.
	kube.nodes = append(kube.nodes, KubeNode{Name: "worker-1", Labels: map[string]string{}})
	expect(t, checkLBTargets(context.Background(), env), StatusFail, "added none of the eligible nodes (worker-1)")
}

func TestLBTargetsUnhealthy(t *testing.T) {
	env := &Env{Cloud: &fakeCloud{lbs: []LoadBalancer{workerLB(LBResolved{ServerName: "worker-1", Health: "unhealthy"})}}}
	expect(t, checkLBTargets(context.Background(), env), StatusFail, "all 1 targets are unhealthy")
	env.Cloud = &fakeCloud{lbs: []LoadBalancer{workerLB(LBResolved{ServerName: "worker-1", Health: "unhealthy"}, LBResolved{ServerName: "worker-2", Health: "healthy"})}}
	expect(t, checkLBTargets(context.Background(), env), StatusWarn, "1 of 2 targets unhealthy")
	env.Cloud = nil
	expect(t, checkLBTargets(context.Background(), env), StatusSkip, "no Hetzner token")
}

func TestSelector(t *testing.T) {
	labels := map[string]string{"env": "prod", "pool": "worker"}
	cases := []struct {
		sel  string
		want bool
	}{
		{"env=prod", true}, {"env==prod", true}, {"env!=prod", false}, {"env", true}, {"!env", false},
		{"pool in (worker,storage)", true}, {"pool notin (worker)", false}, {"env=prod,pool=storage", false},
		{"env=prod, missing!=x", true}, {"!missing", true},
	}
	for _, c := range cases {
		reqs, err := cloud.ParseSelector(c.sel)
		if err != nil {
			t.Fatalf("%s: %v", c.sel, err)
		}
		if got := reqs.Matches(labels); got != c.want {
			t.Errorf("%s: got %v, want %v", c.sel, got, c.want)
		}
	}
	if _, err := cloud.ParseSelector("pool in worker"); err == nil {
		t.Error("unparenthesised in-list accepted")
	}
}

const schematicWorker = "613e1592b2da41ae5e265e8789429f22e121aab91cb4deb6bc3c0b6262961245"

func TestImages(t *testing.T) {
	snaps := []Snapshot{
		{ID: 101, Architecture: "x86", Labels: map[string]string{"os": "talos", "version": "v1.13.9", "arch": "amd64", "schematic": schematicWorker[:63]}},
		{ID: 102, Architecture: "arm", Description: "talos v1.13.9 arm64 " + schematicWorker, Labels: map[string]string{"os": "talos", "version": "v1.13.9"}},
	}
	env := &Env{Cloud: &fakeCloud{snaps: snaps}, ExpectedImages: []ImageKey{
		{Arch: "amd64", TalosVersion: "v1.13.9", SchematicID: schematicWorker},
		{Arch: "arm64", TalosVersion: "1.13.9", SchematicID: schematicWorker},
	}}
	expect(t, checkImages(context.Background(), env), StatusPass, "snapshot 101", "snapshot 102")

	env.ExpectedImages = append(env.ExpectedImages, ImageKey{Arch: "amd64", TalosVersion: "v1.14.0", SchematicID: schematicWorker})
	expect(t, checkImages(context.Background(), env), StatusFail, "amd64 v1.14.0 schematic 613e1592b2da: no snapshot", "build the missing snapshots")
}

func TestEtcd(t *testing.T) {
	now := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	env, ft := healthyCluster()
	env.Now = func() time.Time { return now }
	expect(t, checkEtcd(context.Background(), env), StatusWarn, "etcd member cp-2 (a1): voting member", "no scheduled backup")
	env.LastSnapshot = now.Add(-time.Hour)

	// cp-1 down: members are read from cp-2; one learner and one stale member.
	ft.errs["10.0.1.1"] = context.DeadlineExceeded
	ft.members["10.0.1.2"] = []EtcdMember{{ID: 1, Name: "cp-1"}, {ID: 2, Name: "cp-2"}, {ID: 3, Name: "cp-3", IsLearner: true}, {ID: 4, Name: "cp-old"}}
	expect(t, checkEtcd(context.Background(), env), StatusFail, "member cp-3 is still a learner", "etcd member cp-old is not a control plane", "members as seen from cp-2", "remove-member")

	ft.members["10.0.1.2"] = []EtcdMember{{ID: 1, Name: "cp-1"}, {ID: 2, Name: "cp-2"}}
	expect(t, checkEtcd(context.Background(), env), StatusFail, "control plane cp-3 is not an etcd member")

	for _, cp := range env.ControlPlanes {
		ft.errs[cp.PrivateIP] = context.DeadlineExceeded
	}
	expect(t, checkEtcd(context.Background(), env), StatusError, "cp-3: context deadline exceeded")
}

func TestMTU(t *testing.T) {
	env, ft := healthyCluster()
	env.PodMTU = 1450
	expect(t, checkMTU(context.Background(), env), StatusPass, "worker-1: private link eth1 MTU 1450", "pod MTU (spec): 1450")

	env.PodMTU = 1500
	env.Kube = &fakeKube{cilium: &CiliumConfig{MTU: 9000}}
	expect(t, checkMTU(context.Background(), env), StatusFail, "pod MTU (spec) 1500 is above the private link MTU 1450", "Cilium MTU (cluster) 9000", "dropped without an ICMP error", "--mtu=1400")

	env.PodMTU, env.Kube = 0, nil
	ft.links["10.0.2.1"][2].MTU = 1500
	expect(t, checkMTU(context.Background(), env), StatusFail, "worker-1: private link eth1 has MTU 1500, above Hetzner's 1450")

	expect(t, checkMTU(context.Background(), &Env{}), StatusSkip, "no talosconfig")
}

func TestProviderID(t *testing.T) {
	kube := &fakeKube{nodes: []KubeNode{{Name: "cp-1", ProviderID: "hcloud://101"}, {Name: "worker-1", ProviderID: "hcloud://102"}}}
	env := &Env{Kube: kube}
	expect(t, checkProviderID(context.Background(), env), StatusPass, "worker-1: hcloud://102")

	kube.nodes = append(kube.nodes, KubeNode{Name: "worker-2"})
	expect(t, checkProviderID(context.Background(), env), StatusWarn, "worker-2: providerID not set")

	kube.nodes = append(kube.nodes, KubeNode{Name: "worker-3", ProviderID: "talos://metal/10.0.2.3"})
	expect(t, checkProviderID(context.Background(), env), StatusFail, "worker-3: talos://metal/10.0.2.3", "no routes", "kubectl delete node")
}
