package doctor

import (
	"context"
	"testing"
)

func TestNodesReady(t *testing.T) {
	env, _ := healthyCluster()
	ready := func(name string) KubeNode { return KubeNode{Name: name, Ready: true, ProviderID: "hcloud://1"} }
	all := []KubeNode{ready("cp-1"), ready("cp-2"), ready("cp-3"), ready("worker-1")}
	cases := []struct {
		name      string
		nodes     []KubeNode
		status    Status
		fragments []string
	}{
		{"all Ready", all, StatusPass, []string{"worker-1: Ready"}},
		{"no CNI", []KubeNode{ready("cp-1"), ready("cp-2"), ready("cp-3"),
			{Name: "worker-1", NotReadyReason: "no CNI: the network plugin is not ready (is Cilium running?)"}},
			StatusFail, []string{"worker-1: NotReady, no CNI", "CNI none", "ohmytalos apply --only addons"}},
		{"uninitialized", []KubeNode{ready("cp-1"), ready("cp-2"), ready("cp-3"),
			{Name: "worker-1", NotReadyReason: "KubeletNotReady: PLEG", Taints: []string{"node.cloudprovider.kubernetes.io/uninitialized"}}},
			StatusFail, []string{"worker-1: NotReady", "uninitialized taint", "hcloud-cloud-controller-manager"}},
		{"a node missing", all[:3], StatusFail, []string{"3 of 4 nodes have registered"}},
		{"other reason", []KubeNode{ready("cp-1"), ready("cp-2"), ready("cp-3"), {Name: "worker-1", NotReadyReason: "KubeletNotReady: disk pressure"}},
			StatusFail, []string{"disk pressure", "kubectl describe node"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			env.Kube = &fakeKube{nodes: c.nodes}
			expect(t, checkNodesReady(context.Background(), env), c.status, c.fragments...)
		})
	}
	expect(t, checkNodesReady(context.Background(), &Env{}), StatusSkip)
}

func TestAddonsCheck(t *testing.T) {
	healthy := func() map[string]*Workload {
		out := map[string]*Workload{}
		for _, r := range defaultAddonWorkloads {
			out[r.Kind+"/"+r.Namespace+"/"+r.Name] = &Workload{Kind: r.Kind, Namespace: r.Namespace, Name: r.Name, Ready: 2, Want: 2}
		}
		return out
	}
	cases := []struct {
		name      string
		mutate    func(map[string]*Workload)
		refs      []WorkloadRef
		status    Status
		fragments []string
	}{
		{"all ready", nil, nil, StatusPass, []string{"cilium: DaemonSet kube-system/cilium: 2/2 ready"}},
		{"CCM missing", func(w map[string]*Workload) { delete(w, "Deployment/kube-system/hcloud-cloud-controller-manager") }, nil,
			StatusFail, []string{"hcloud-ccm: Deployment kube-system/hcloud-cloud-controller-manager is not installed", "Not ready: hcloud-ccm"}},
		{"Cilium not ready", func(w map[string]*Workload) { w["DaemonSet/kube-system/cilium"].Ready = 1 }, nil,
			StatusFail, []string{"DaemonSet kube-system/cilium: 1/2 ready", "nodes stay NotReady"}},
		{"only what the spec installs", func(w map[string]*Workload) { delete(w, "Deployment/kube-system/hcloud-csi-controller") },
			[]WorkloadRef{{"cilium", "DaemonSet", "kube-system", "cilium"}}, StatusPass, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			w := healthy()
			if c.mutate != nil {
				c.mutate(w)
			}
			env := &Env{Kube: &fakeKube{workloads: w}, AddonWorkloads: c.refs}
			expect(t, checkAddons(context.Background(), env), c.status, c.fragments...)
		})
	}
}
