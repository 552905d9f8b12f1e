package kube

import (
	"fmt"
	"strings"
)

// UninitializedTaint is the taint kubelet sets with an external cloud
// provider; the cloud controller removes it once it initialised the node.
const UninitializedTaint = "node.cloudprovider.kubernetes.io/uninitialized"

// NodeInfo is what readiness checks need from a Node.
type NodeInfo struct {
	Name       string
	ProviderID string
	Ready      bool
	// Reason explains a NotReady node in operator terms ("" when Ready).
	Reason string
	// Taints are the node's taint keys.
	Taints []string
}

// Node reads a Node object.
func Node(o Object) NodeInfo {
	n := NodeInfo{Name: str(o, "metadata", "name"), ProviderID: str(o, "spec", "providerID")}
	for _, t := range list(o, "spec", "taints") {
		if k, _ := t.(map[string]any)["key"].(string); k != "" {
			n.Taints = append(n.Taints, k)
		}
	}
	var msg, reason string
	found := false
	for _, c := range list(o, "status", "conditions") {
		cm, _ := c.(map[string]any)
		if cm["type"] != "Ready" {
			continue
		}
		found = true
		n.Ready = cm["status"] == "True"
		msg, _ = cm["message"].(string)
		reason, _ = cm["reason"].(string)
	}
	if !n.Ready {
		n.Reason = NotReadyReason(found, reason, msg, n.Taints)
	}
	return n
}

// NotReadyReason turns a Ready condition into what is missing: no CNI
// (kubelet's "network plugin not ready"), the cloud controller (the
// uninitialized taint), or the condition's own words.
func NotReadyReason(haveCondition bool, reason, message string, taints []string) string {
	low := strings.ToLower(message)
	switch {
	case !haveCondition:
		return "kubelet has not reported a Ready condition yet"
	case strings.Contains(low, "cni") || strings.Contains(low, "networkpluginnotready") || strings.Contains(low, "network plugin"):
		return "no CNI: the network plugin is not ready (is Cilium running?)"
	}
	for _, t := range taints {
		if t == UninitializedTaint {
			return "uninitialized: the cloud controller has not initialised the node"
		}
	}
	if message != "" {
		return fmt.Sprintf("%s: %s", reason, message)
	}
	return reason
}

// WorkloadReady reads a DaemonSet's or Deployment's status: how many pods
// are ready of how many wanted. A workload the controller has not seen at
// its current generation counts as not ready.
func WorkloadReady(o Object) (ready, want int) {
	gen, _ := num(o, "metadata", "generation")
	obs, hasObs := num(o, "status", "observedGeneration")
	kind, _ := o["kind"].(string)
	switch kind {
	case "DaemonSet":
		want, _ = num(o, "status", "desiredNumberScheduled")
		ready, _ = num(o, "status", "numberReady")
	default:
		w, ok := num(o, "spec", "replicas")
		if !ok {
			w = 1
		}
		want = w
		ready, _ = num(o, "status", "readyReplicas")
	}
	if hasObs && gen > obs {
		ready = 0
	}
	return ready, want
}

func walk(o Object, path ...string) any {
	var v any = o
	for _, p := range path {
		mm, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = mm[p]
	}
	return v
}

func str(o Object, path ...string) string { s, _ := walk(o, path...).(string); return s }

func list(o Object, path ...string) []any { l, _ := walk(o, path...).([]any); return l }

func num(o Object, path ...string) (int, bool) {
	switch v := walk(o, path...).(type) {
	case float64:
		return int(v), true
	case int:
		return v, true
	case int64:
		return int(v), true
	}
	return 0, false
}
