package talosfake

import (
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strings"
	"time"
)

// Well-known node labels and taints, as Talos and the kubelet set them.
const (
	labelControlPlane  = "node-role.kubernetes.io/control-plane"
	labelExcludeFromLB = "node.kubernetes.io/exclude-from-external-load-balancers"
)

type kubeTaint struct {
	Key    string `json:"key"`
	Value  string `json:"value,omitempty"`
	Effect string `json:"effect"`
}

type kubeNode struct {
	Metadata struct {
		Name              string            `json:"name"`
		UID               string            `json:"uid"`
		CreationTimestamp string            `json:"creationTimestamp"`
		Labels            map[string]string `json:"labels"`
	} `json:"metadata"`
	Spec struct {
		ProviderID string      `json:"providerID"`
		Taints     []kubeTaint `json:"taints,omitempty"`
	} `json:"spec"`
	Status struct {
		Addresses  []map[string]string `json:"addresses"`
		Conditions []map[string]string `json:"conditions"`
		NodeInfo   map[string]string   `json:"nodeInfo"`
	} `json:"status"`
}

// nodes lists every running node of the cluster, as the kubelets registered them.
func (k *kubeAPI) nodes(w http.ResponseWriter, _ *http.Request) {
	c := k.node.cluster
	c.mu.Lock()

	var items []kubeNode

	for _, n := range c.sortedNodesLocked() {
		if n.cfg.clusterID == k.node.cfg.clusterID {
			items = append(items, n.kubeNodeLocked())
		}
	}

	c.mu.Unlock()

	writeJSON(w, http.StatusOK, map[string]any{
		"kind":       "NodeList",
		"apiVersion": "v1",
		"metadata":   map[string]string{"resourceVersion": "1"},
		"items":      items,
	})
}

// kubeNodeLocked renders the Node object of n. Called with cluster.mu held.
func (n *Node) kubeNodeLocked() kubeNode {
	var kn kubeNode

	kn.Metadata.Name = n.opts.Name
	kn.Metadata.UID = fmt.Sprintf("00000000-0000-4000-8000-%012d", n.opts.ServerID)
	kn.Metadata.CreationTimestamp = n.started.UTC().Format(time.RFC3339)

	labels := map[string]string{
		"kubernetes.io/hostname": n.opts.Name,
		"kubernetes.io/os":       "linux",
		"kubernetes.io/arch":     "amd64",
		"beta.kubernetes.io/os":  "linux",
	}
	maps.Copy(labels, n.cfg.labels)

	if n.cfg.controlPlane() {
		// Talos >= 1.8 labels control planes for the CCM to skip them as LB targets.
		labels[labelControlPlane] = ""
		labels[labelExcludeFromLB] = ""

		if !n.cfg.schedCPOK {
			kn.Spec.Taints = append(kn.Spec.Taints, kubeTaint{Key: labelControlPlane, Effect: "NoSchedule"})
		}
	}

	kn.Metadata.Labels = labels

	// machine.nodeTaints values are "value:Effect" (or ":Effect").
	for _, key := range slices.Sorted(maps.Keys(n.cfg.taints)) {
		value, effect := "", n.cfg.taints[key]
		if i := strings.LastIndex(effect, ":"); i >= 0 {
			value, effect = effect[:i], effect[i+1:]
		}

		kn.Spec.Taints = append(kn.Spec.Taints, kubeTaint{Key: key, Value: value, Effect: effect})
	}

	kn.Spec.ProviderID = fmt.Sprintf("hcloud://%d", n.opts.ServerID)

	if n.opts.PrivateIP != "" {
		kn.Status.Addresses = append(kn.Status.Addresses, map[string]string{"type": "InternalIP", "address": n.opts.PrivateIP})
	}

	if n.opts.PublicIP != "" {
		kn.Status.Addresses = append(kn.Status.Addresses, map[string]string{"type": "ExternalIP", "address": n.opts.PublicIP})
	}

	kn.Status.Addresses = append(kn.Status.Addresses, map[string]string{"type": "Hostname", "address": n.opts.Name})
	kn.Status.Conditions = []map[string]string{{"type": "Ready", "status": "True", "reason": "KubeletReady"}}
	kn.Status.NodeInfo = map[string]string{
		"kubeletVersion":          n.cfg.k8sVersion,
		"osImage":                 fmt.Sprintf("Talos (%s)", n.opts.TalosVersion),
		"operatingSystem":         "linux",
		"architecture":            "amd64",
		"containerRuntimeVersion": "containerd://2.1.0",
	}

	return kn
}
