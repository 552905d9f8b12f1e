package kubesource

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/ohmytalos/ohmytalos/internal/addons"
	"github.com/ohmytalos/ohmytalos/internal/spec"
)

func TestSourceReadsReadinessAndWorkloads(t *testing.T) {
	src := sourceFor(t, map[string]any{
		"/api/v1/nodes": map[string]any{"items": []any{
			map[string]any{"metadata": map[string]any{"name": "cp-1", "labels": map[string]any{"a": "b"}}, "spec": map[string]any{"providerID": "hcloud://1"},
				"status": map[string]any{"conditions": []any{map[string]any{"type": "Ready", "status": "True"}}}},
			map[string]any{"metadata": map[string]any{"name": "w-1"},
				"spec": map[string]any{"taints": []any{map[string]any{"key": "node.cloudprovider.kubernetes.io/uninitialized", "effect": "NoSchedule"}}},
				"status": map[string]any{"conditions": []any{map[string]any{"type": "Ready", "status": "False", "reason": "KubeletNotReady",
					"message": "container runtime network not ready: NetworkReady=false reason:NetworkPluginNotReady message:cni plugin not initialized"}}}},
		}},
		"/apis/apps/v1/namespaces/kube-system/daemonsets/cilium": map[string]any{"status": map[string]any{"desiredNumberScheduled": 2, "numberReady": 1}},
		"/apis/apps/v1/namespaces/kube-system/deployments/hcloud-cloud-controller-manager": map[string]any{"spec": map[string]any{"replicas": 1},
			"status": map[string]any{"readyReplicas": 1}},
	})
	ctx := context.Background()
	nodes, err := src.Nodes(ctx)
	if err != nil || len(nodes) != 2 {
		t.Fatalf("nodes = %+v, %v", nodes, err)
	}
	if !nodes[0].Ready || nodes[0].Labels["a"] != "b" || nodes[1].Ready || !strings.Contains(nodes[1].NotReadyReason, "no CNI") || len(nodes[1].Taints) != 1 {
		t.Errorf("nodes = %+v", nodes)
	}
	ds, err := src.Workload(ctx, "DaemonSet", "kube-system", "cilium")
	if err != nil || ds == nil || ds.Ready != 1 || ds.Want != 2 {
		t.Errorf("cilium = %+v, %v", ds, err)
	}
	dep, err := src.Workload(ctx, "Deployment", "kube-system", "hcloud-cloud-controller-manager")
	if err != nil || dep == nil || dep.Ready != 1 || dep.Want != 1 {
		t.Errorf("ccm = %+v, %v", dep, err)
	}
	missing, err := src.Workload(ctx, "Deployment", "kube-system", "hcloud-csi-controller")
	if err != nil || missing != nil {
		t.Errorf("missing workload = %+v, %v", missing, err)
	}
}

// The Cilium ohmytalos installs, read back the way the doctor reads it,
// has every setting Talos needs.
func TestSourceReadsRenderedCilium(t *testing.T) {
	sp := spec.Default("demo")
	rendered, err := addons.Render(sp, addons.Inputs{NetworkID: 1, Token: "t"})
	if err != nil {
		t.Fatal(err)
	}
	routes := map[string]any{}
	for _, a := range rendered {
		for _, o := range a.Objects {
			switch {
			case o.Kind() == "DaemonSet" && o.Name() == "cilium":
				routes["/apis/apps/v1/namespaces/kube-system/daemonsets/cilium"] = map[string]any(o)
			case o.Kind() == "ConfigMap" && o.Name() == "cilium-config":
				routes["/api/v1/namespaces/kube-system/configmaps/cilium-config"] = map[string]any(o)
			}
		}
	}
	src := sourceFor(t, routes)
	c, err := src.CiliumConfig(context.Background())
	if err != nil || c == nil {
		t.Fatalf("cilium config = %+v, %v", c, err)
	}
	if c.K8sServiceHost != "localhost" || c.K8sServicePort != 7445 || c.CgroupAutoMount || c.CgroupHostRoot != "/sys/fs/cgroup" || c.MTU != 1450 ||
		len(c.AgentCaps) != 11 || len(c.CleanCaps) != 3 || slices.Contains(c.AgentCaps, "SYS_MODULE") {
		t.Errorf("rendered Cilium reads back as %+v", c)
	}
}
