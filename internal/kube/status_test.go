package kube

import (
	"strings"
	"testing"
)

func TestNode(t *testing.T) {
	cond := func(status, reason, msg string) []any {
		return []any{map[string]any{"type": "Ready", "status": status, "reason": reason, "message": msg}}
	}
	cases := []struct {
		name       string
		obj        Object
		ready      bool
		reasonHas  string
		providerID string
	}{
		{"ready", Object{"metadata": map[string]any{"name": "n1"}, "spec": map[string]any{"providerID": "hcloud://7"},
			"status": map[string]any{"conditions": cond("True", "KubeletReady", "")}}, true, "", "hcloud://7"},
		{"no CNI", Object{"metadata": map[string]any{"name": "n2"}, "status": map[string]any{"conditions": cond("False", "KubeletNotReady",
			"container runtime network not ready: NetworkReady=false reason:NetworkPluginNotReady message:Network plugin returns error: cni plugin not initialized")}},
			false, "no CNI", ""},
		{"uninitialized", Object{"metadata": map[string]any{"name": "n3"},
			"spec":   map[string]any{"taints": []any{map[string]any{"key": UninitializedTaint, "effect": "NoSchedule"}}},
			"status": map[string]any{"conditions": cond("Unknown", "NodeStatusUnknown", "Kubelet stopped posting node status.")}}, false, "uninitialized", ""},
		{"no condition", Object{"metadata": map[string]any{"name": "n4"}}, false, "has not reported", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			n := Node(c.obj)
			if n.Ready != c.ready || !strings.Contains(n.Reason, c.reasonHas) || n.ProviderID != c.providerID {
				t.Fatalf("Node = %+v", n)
			}
		})
	}
}

func TestWorkloadReady(t *testing.T) {
	cases := []struct {
		name        string
		obj         Object
		ready, want int
	}{
		{"daemonset", Object{"kind": "DaemonSet", "status": map[string]any{"desiredNumberScheduled": 5.0, "numberReady": 3.0}}, 3, 5},
		{"deployment", Object{"kind": "Deployment", "spec": map[string]any{"replicas": 2.0}, "status": map[string]any{"readyReplicas": 2.0}}, 2, 2},
		{"deployment default replicas", Object{"kind": "Deployment", "status": map[string]any{}}, 0, 1},
		{"stale generation", Object{"kind": "Deployment", "metadata": map[string]any{"generation": 3.0}, "spec": map[string]any{"replicas": 1.0},
			"status": map[string]any{"observedGeneration": 2.0, "readyReplicas": 1.0}}, 0, 1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r, w := WorkloadReady(c.obj)
			if r != c.ready || w != c.want {
				t.Fatalf("WorkloadReady = %d/%d, want %d/%d", r, w, c.ready, c.want)
			}
		})
	}
}
