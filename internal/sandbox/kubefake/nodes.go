package kubefake

import (
	"encoding/json"
	"fmt"
	"net/netip"
	"slices"
	"strings"
)

// Taint is a node taint.
type Taint struct {
	Key, Value, Effect string
}

// NodeRegistration is what a kubelet reports when it registers its node.
type NodeRegistration struct {
	// Name is the node name (the hostname).
	Name string
	// KubeletVersion is status.nodeInfo.kubeletVersion, e.g. "v1.35.0".
	KubeletVersion string
	// OSImage is status.nodeInfo.osImage, e.g. "Talos (v1.13.9)".
	OSImage string
	// Architecture is GOARCH ("amd64" when empty).
	Architecture string
	// InternalIP is the --node-ip the kubelet reports ("" for none).
	InternalIP string
	// Labels are set on registration besides the kubelet's well-known ones.
	Labels map[string]string
	// Taints are registered with the node (--register-with-taints).
	Taints []Taint
	// OwnedLabelsAnnotation and OwnedTaintsAnnotation, when set, make the
	// node's OS keep Labels and Taints in sync after registration too: the
	// keys it manages are recorded in these annotations (as a JSON list) and
	// those it stops managing are removed, as Talos' node label and taint
	// controllers do with talos.dev/owned-labels and talos.dev/owned-taints.
	OwnedLabelsAnnotation, OwnedTaintsAnnotation string
	// ExternalCloudProvider is kubelet --cloud-provider=external: the node
	// registers with the node.cloudprovider.kubernetes.io/uninitialized taint.
	ExternalCloudProvider bool
	// NoIPv4Egress is a node without an IPv4 default route (an IPv6-only
	// server): its image pulls from IPv4-only registries fail.
	NoIPv4Egress bool
}

// Well-known taints and labels (k8s.io/api/core/v1 well_known_taints.go,
// k8s.io/cloud-provider/api well_known_taints.go).
const (
	taintUninitialized = "node.cloudprovider.kubernetes.io/uninitialized"
	taintNotReady      = "node.kubernetes.io/not-ready"
	taintUnreachable   = "node.kubernetes.io/unreachable"
	taintUnschedulable = "node.kubernetes.io/unschedulable"
	cniConfDir         = "/etc/cni/net.d"
	// msgNoCNI is the kubelet's Ready=False message before a CNI config exists.
	msgNoCNI = "container runtime network not ready: NetworkReady=false reason:NetworkPluginNotReady message:Network plugin returns error: cni plugin not initialized"
)

// RegisterNode is a kubelet starting: it creates the Node object when it
// does not exist yet and reports the node's status from then on.
func (s *Server) RegisterNode(reg NodeRegistration) error {
	if reg.Architecture == "" {
		reg.Architecture = "amd64"
	}

	s.mu.Lock()
	defer s.mu.Unlock()

	s.kubelets[reg.Name] = true
	s.noIPv4[reg.Name] = reg.NoIPv4Egress
	nodes := s.builtinLocked("nodes")

	if old, ok := s.getLocked(nodes, "", reg.Name); ok {
		n := copyObj(old)
		set(n, reg.KubeletVersion, "status", "nodeInfo", "kubeletVersion")
		set(n, reg.OSImage, "status", "nodeInfo", "osImage")
		syncOwned(n, reg)
		s.saveLocked(nodes, old, n)

		return nil
	}

	labels := obj{
		"kubernetes.io/hostname": reg.Name, "kubernetes.io/os": "linux", "kubernetes.io/arch": reg.Architecture,
		"beta.kubernetes.io/os": "linux", "beta.kubernetes.io/arch": reg.Architecture,
	}
	for k, v := range reg.Labels {
		labels[k] = v
	}

	// Not ready until the runtime's network is: the node lifecycle
	// controller's condition taint is there from the start.
	taints := []any{obj{"key": taintNotReady, "effect": "NoSchedule"}}
	if reg.ExternalCloudProvider {
		taints = append(taints, obj{"key": taintUninitialized, "value": "true", "effect": "NoSchedule"})
	}

	for _, t := range reg.Taints {
		taints = append(taints, taintObj(t.Key, t.Value, t.Effect))
	}

	addrs := []any{}
	if reg.InternalIP != "" {
		addrs = append(addrs, obj{"type": "InternalIP", "address": reg.InternalIP})
	}

	addrs = append(addrs, obj{"type": "Hostname", "address": reg.Name})

	n := obj{
		"metadata": obj{"name": reg.Name, "labels": labels},
		"spec":     obj{},
		"status": obj{
			"addresses":  addrs,
			"conditions": []any{},
			"nodeInfo": obj{
				"kubeletVersion": reg.KubeletVersion, "osImage": reg.OSImage, "operatingSystem": "linux",
				"architecture": reg.Architecture, "containerRuntimeVersion": "containerd://2.1.4", "kernelVersion": "6.18.0-talos",
			},
			"capacity":    obj{"cpu": "2", "memory": "3908520Ki", "pods": "110", "ephemeral-storage": "40470Mi"},
			"allocatable": obj{"cpu": "1950m", "memory": "3544952Ki", "pods": "110", "ephemeral-storage": "37261Mi"},
		},
	}
	if len(taints) > 0 {
		set(n, taints, "spec", "taints")
	}

	syncOwned(n, reg)
	s.setCondition(n, "Ready", "False", "KubeletNotReady", msgNoCNI)

	if _, err := s.createLocked(nodes, "", n, createOpts{}); err != nil {
		return fmt.Errorf("register node %q: %w", reg.Name, err)
	}

	return nil
}

// StopKubelet is a kubelet going away (node powered off, rebooting or
// deleted): the node controller marks its status Unknown.
func (s *Server) StopKubelet(name string) {
	s.mu.Lock()
	defer s.mu.Unlock()

	delete(s.kubelets, name)
	s.kickLocked()
}

func (s *Server) kickLocked() {
	select {
	case s.kick <- struct{}{}:
	default:
	}
}

func taintObj(key, value, effect string) obj {
	t := obj{"key": key, "effect": effect}
	if value != "" {
		t["value"] = value
	}

	return t
}

func hasTaint(n obj, key, effect string) bool {
	return slices.ContainsFunc(listAt(n, "spec", "taints"), func(t any) bool {
		return str(t, "key") == key && (effect == "" || str(t, "effect") == effect)
	})
}

// setTaint adds or removes a taint on a node copy.
func setTaint(n obj, key, value, effect string, want bool) {
	if want && slices.ContainsFunc(listAt(n, "spec", "taints"), func(t any) bool {
		return str(t, "key") == key && str(t, "effect") == effect && str(t, "value") == value
	}) {
		return // already there: keep its place
	}

	ts := slices.DeleteFunc(slices.Clone(listAt(n, "spec", "taints")), func(t any) bool {
		return str(t, "key") == key && str(t, "effect") == effect
	})
	if want {
		ts = append(ts, taintObj(key, value, effect))
	}

	if len(ts) == 0 {
		delete(mapAt(n, "spec"), "taints")

		return
	}

	set(n, ts, "spec", "taints")
}

// saveLocked stores a controller's change to an object when there is one.
func (s *Server) saveLocked(r resource, old, next obj) {
	if equal(old, next) {
		return
	}

	s.storeLocked(r, next, "MODIFIED")
}

func condition(o any, typ string) map[string]any {
	for _, c := range listAt(o, "status", "conditions") {
		if str(c, "type") == typ {
			m, _ := c.(map[string]any) //nolint:errcheck // conditions are objects

			return m
		}
	}

	return nil
}

// setCondition sets a status condition, keeping lastTransitionTime while
// the status does not change.
func (s *Server) setCondition(o obj, typ, status, reason, message string) {
	ts := s.timestamp()
	c := obj{"type": typ, "status": status, "reason": reason, "message": message, "lastTransitionTime": ts}

	if old := condition(o, typ); old != nil {
		if str(old, "status") == status {
			c["lastTransitionTime"] = old["lastTransitionTime"]
		}

		for _, k := range []string{"lastHeartbeatTime", "lastUpdateTime", "lastProbeTime"} {
			if v, ok := old[k]; ok {
				c[k] = v
			}
		}
	}

	conds := slices.DeleteFunc(slices.Clone(listAt(o, "status", "conditions")), func(e any) bool { return str(e, "type") == typ })
	set(o, append(conds, c), "status", "conditions")
}

// reconcileNodesLocked plays the kubelet's status, the node lifecycle
// controller's condition taints and the node IPAM controller.
func (s *Server) reconcileNodesLocked() {
	nodes := s.builtinLocked("nodes")

	for _, old := range s.sortedLocked(nodes.key()) {
		n := copyObj(old)
		name := str(n, "metadata", "name")

		s.assignPodCIDRLocked(n)

		switch {
		case !s.kubelets[name]:
			if c := condition(n, "Ready"); c == nil || str(c, "status") != "Unknown" {
				s.setCondition(n, "Ready", "Unknown", "NodeStatusUnknown", "Kubelet stopped posting node status.")
			}
		case s.nodeNetworkReadyLocked(name):
			s.setCondition(n, "Ready", "True", "KubeletReady", "kubelet is posting ready status")
		default:
			s.setCondition(n, "Ready", "False", "KubeletNotReady", msgNoCNI)
		}

		ready := str(condition(n, "Ready"), "status")
		setTaint(n, taintNotReady, "", "NoSchedule", ready == "False")
		setTaint(n, taintUnreachable, "", "NoSchedule", ready == "Unknown")
		setTaint(n, taintUnreachable, "", "NoExecute", ready == "Unknown")
		setTaint(n, taintUnschedulable, "", "NoSchedule", boolAt(n, "spec", "unschedulable"))

		s.saveLocked(nodes, old, n)
	}
}

// assignPodCIDRLocked is the node IPAM controller (kube-controller-manager
// --allocate-node-cidrs, which Talos enables): the next free
// /NodeCIDRMaskSize of the first pod subnet.
func (s *Server) assignPodCIDRLocked(n obj) {
	if str(n, "spec", "podCIDR") != "" || len(s.opts.PodCIDRs) == 0 {
		return
	}

	cluster := s.opts.PodCIDRs[0].Masked()
	bits := s.opts.NodeCIDRMaskSize

	if bits < cluster.Bits() || bits > cluster.Addr().BitLen() {
		return
	}

	used := map[string]bool{}
	for _, o := range s.sortedLocked("/nodes") {
		used[str(o, "spec", "podCIDR")] = true
	}

	step := 1 << (cluster.Addr().BitLen() - bits)

	for i := 0; i < 1<<min(bits-cluster.Bits(), 16); i++ {
		p := netip.PrefixFrom(addOffset(cluster.Addr(), i*step), bits)
		if !used[p.String()] {
			set(n, p.String(), "spec", "podCIDR")
			set(n, []any{p.String()}, "spec", "podCIDRs")

			return
		}
	}
}

// addOffset adds n to an address.
func addOffset(a netip.Addr, n int) netip.Addr {
	b := a.AsSlice()
	carry := n

	for i := len(b) - 1; i >= 0 && carry > 0; i-- {
		sum := int(b[i]) + carry
		b[i] = byte(sum % 256)
		carry = sum / 256
	}

	out, _ := netip.AddrFromSlice(b)

	return out
}

// nodeNetworkReadyLocked: the container runtime's network is ready once a
// CNI DaemonSet's pod (one mounting the host's /etc/cni/net.d, where a CNI
// writes its config) runs on the node.
func (s *Server) nodeNetworkReadyLocked(node string) bool {
	for _, p := range s.sortedLocked("/pods") {
		if str(p, "spec", "nodeName") != node || str(p, "status", "phase") != "Running" || !podReady(p) {
			continue
		}

		if owner := controllerOf(p); str(owner, "kind") != "DaemonSet" {
			continue
		}

		for _, v := range listAt(p, "spec", "volumes") {
			if path := str(v, "hostPath", "path"); path == cniConfDir || path == cniConfDir+"/" {
				return true
			}
		}
	}

	return false
}

func controllerOf(o obj) map[string]any {
	for _, r := range listAt(o, "metadata", "ownerReferences") {
		if boolAt(r, "controller") {
			m, _ := r.(map[string]any) //nolint:errcheck // owner references are objects

			return m
		}
	}

	return nil
}

// syncOwned applies the labels and taints the node's OS manages, removing
// those it managed before and no longer does.
func syncOwned(n obj, reg NodeRegistration) {
	if a := reg.OwnedLabelsAnnotation; a != "" {
		labels := mapAt(n, "metadata", "labels")
		for _, k := range ownedKeys(n, a) {
			if _, keep := reg.Labels[k]; !keep {
				delete(labels, k)
			}
		}

		keys := make([]string, 0, len(reg.Labels))
		for k, v := range reg.Labels {
			labels[k] = v
			keys = append(keys, k)
		}

		setOwned(n, a, keys)
	}

	if a := reg.OwnedTaintsAnnotation; a != "" {
		var keys []string

		for _, k := range ownedKeys(n, a) {
			if !slices.ContainsFunc(reg.Taints, func(t Taint) bool { return t.Key+":"+t.Effect == k }) {
				i := strings.LastIndex(k, ":")
				setTaint(n, k[:i], "", k[i+1:], false)
			}
		}

		for _, t := range reg.Taints {
			setTaint(n, t.Key, t.Value, t.Effect, true)
			keys = append(keys, t.Key+":"+t.Effect)
		}

		setOwned(n, a, keys)
	}
}

func ownedKeys(n obj, annotation string) []string {
	var keys []string
	if err := json.Unmarshal([]byte(str(n, "metadata", "annotations", annotation)), &keys); err != nil {
		return nil
	}

	return keys
}

func setOwned(n obj, annotation string, keys []string) {
	slices.Sort(keys)

	b, _ := json.Marshal(keys) //nolint:errcheck // strings always encode
	set(n, string(b), "metadata", "annotations", annotation)
}
