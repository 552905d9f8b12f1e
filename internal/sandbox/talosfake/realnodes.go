package talosfake

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/siderolabs/talos/pkg/machinery/constants"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/util/retry"

	"github.com/ohmytalos/ohmytalos/internal/sandbox/kubereal"
)

// taintUninitialized is the taint the kubelet registers with under
// --cloud-provider=external, until the cloud controller initializes the node.
const taintUninitialized = "node.cloudprovider.kubernetes.io/uninitialized"

// realKubelet is one node's kubelet on the real control plane: what it
// registers (its version and addresses; a change restarts it, as Talos
// restarts the kubelet service when machine.kubelet.image changes) and
// the labels and taints Talos' node controllers keep on its Node.
type realKubelet struct {
	cfg    kubereal.KubeletConfig
	labels map[string]string
	taints []corev1.Taint
}

// startRealKubeLocked is startKubeAPILocked on the real control plane:
// the kubelets brought up to date, Talos' ServiceAccount CRD installed
// when machine.features.kubernetesTalosAPIAccess is on, and the node's
// PublicIP:6443 forwarded to kube-apiserver. Called with cluster.mu held.
func (n *Node) startRealKubeLocked() {
	n.cluster.syncRealKubeletsLocked(n)

	if n.cfg.controlPlane() && talosAPIAccessEnabled(n.cfg.raw) {
		n.cluster.realKubeLocked(n).installCRD(talosServiceAccountCRD())
	}

	if n.kube != nil || n.kubeErr != nil || n.opts.PublicIP == "" || n.ctx.Err() != nil {
		return
	}

	sk, err := loadKubeSettings(n.cfg.raw)
	if err != nil {
		n.kubeErr = err

		return
	}

	dns, ips := kubeCertSANs(n, sk)
	n.serveRealKubeLocked(dns, ips)
}

// syncRealKubeletsLocked brings the kubelets of the Talos cluster's
// running nodes up to date on the real API server, once it runs: new
// nodes register, a changed kubelet restarts, a stopped node's kubelet
// stops. Called with cluster.mu held; the work happens in the background.
func (c *Cluster) syncRealKubeletsLocked(n *Node) {
	rk := c.realKubeLocked(n)

	var regs []realKubelet

	for _, m := range c.sortedNodesLocked() {
		if m.cfg.clusterID != n.cfg.clusterID || m.ctx.Err() != nil {
			continue
		}

		if reg, err := m.realKubeletRegistration(); err == nil {
			regs = append(regs, reg)
		}
	}

	rk.mu.Lock()
	rk.syncs++
	gen := rk.syncs
	rk.mu.Unlock()

	go rk.startKubelets(c.ctx, regs, gen)
}

// realKubeletRegistration is what the node's kubelet registers: its name
// (the hostname), version (the machine.kubelet.image tag), addresses,
// Talos' node labels and taints, and the uninitialized taint under an
// external cloud provider (Talos runs the kubelet with
// --cloud-provider=external when cluster.externalCloudProvider.enabled).
func (n *Node) realKubeletRegistration() (realKubelet, error) {
	ks, err := loadKubeSettings(n.cfg.raw)
	if err != nil {
		return realKubelet{}, err
	}

	rr := realKubelet{labels: maps.Clone(n.cfg.labels), cfg: kubereal.KubeletConfig{
		Name:       cmp.Or(n.cfg.hostname, n.opts.Name),
		Version:    imageTag(ks.kubeletImage, cmp.Or(n.cfg.kubeletVersion, n.cfg.k8sVersion)),
		OSImage:    fmt.Sprintf("Talos (%s)", n.opts.TalosVersion),
		InternalIP: cmp.Or(n.opts.PrivateIP, n.opts.PublicIP),
		ExternalIP: n.opts.PublicIP,
		PullDelay:  n.cluster.opts.ImagePullDelay,
		PullError:  n.kubeletPullError(),
	}}

	if rr.labels == nil {
		rr.labels = map[string]string{}
	}

	if n.cfg.controlPlane() {
		// Talos >= 1.8 labels control planes, and excludes them from load balancers.
		rr.labels[labelControlPlane] = ""
		rr.labels[labelExcludeFromLB] = ""

		if !n.cfg.schedCPOK {
			rr.taints = append(rr.taints, corev1.Taint{Key: labelControlPlane, Effect: corev1.TaintEffectNoSchedule})
		}
	}

	// machine.nodeTaints values are "value:Effect" (or ":Effect").
	for _, key := range slices.Sorted(maps.Keys(n.cfg.taints)) {
		value, effect := "", n.cfg.taints[key]
		if i := strings.LastIndex(effect, ":"); i >= 0 {
			value, effect = effect[:i], effect[i+1:]
		}

		rr.taints = append(rr.taints, corev1.Taint{Key: key, Value: value, Effect: corev1.TaintEffect(effect)})
	}

	rr.cfg.Labels, rr.cfg.Taints = rr.labels, slices.Clone(rr.taints)
	if ks.externalCloud {
		rr.cfg.Taints = append(rr.cfg.Taints, corev1.Taint{Key: taintUninitialized, Value: "true", Effect: corev1.TaintEffectNoSchedule})
	}

	return rr, nil
}

// restartNeeded reports whether the kubelet runs something else now.
func (r realKubelet) restartNeeded(prev realKubelet) bool {
	a, b := r.cfg, prev.cfg

	return a.Version != b.Version || a.OSImage != b.OSImage || a.InternalIP != b.InternalIP || a.ExternalIP != b.ExternalIP
}

func (r realKubelet) ownedChanged(prev realKubelet) bool {
	return !maps.Equal(r.labels, prev.labels) || !slices.Equal(r.taints, prev.taints)
}

func (rk *realKube) startKubelets(ctx context.Context, regs []realKubelet, gen uint64) {
	<-rk.ready

	rk.mu.Lock()
	defer rk.mu.Unlock()

	if rk.cp == nil || gen < rk.synced {
		return
	}

	rk.synced = gen

	// A node that stopped (powered off, rebooting, deleted) stops posting
	// status: the node lifecycle controller turns it Unknown.
	for name, k := range rk.kubelets {
		if !slices.ContainsFunc(regs, func(r realKubelet) bool { return r.cfg.Name == name }) {
			k.Stop()
			delete(rk.kubelets, name)
			delete(rk.applied, name)
		}
	}

	for _, reg := range regs {
		rk.syncKubeletLocked(ctx, reg)
	}
}

// syncKubeletLocked starts, restarts or relabels one kubelet. Called with
// rk.mu held, once the control plane runs.
func (rk *realKube) syncKubeletLocked(ctx context.Context, reg realKubelet) {
	name := reg.cfg.Name
	prev, running := rk.applied[name]

	if k := rk.kubelets[name]; k != nil && reg.restartNeeded(prev) {
		k.Stop()
		delete(rk.kubelets, name)

		running = false
	}

	if rk.kubelets[name] == nil {
		k, err := rk.cp.StartKubelet(ctx, reg.cfg)
		if err != nil {
			rk.cluster.opts.Logger.Error("simulated kubelet did not register", "node", name, "err", err)

			return
		}

		rk.kubelets[name] = k
	}

	if running && !reg.ownedChanged(prev) {
		return
	}

	if err := rk.applyOwned(ctx, reg); err != nil {
		rk.cluster.opts.Logger.Error("talos node labels and taints not applied", "node", name, "err", err)

		return
	}

	rk.applied[name] = reg
}

// applyOwned is Talos' node apply controller: the labels and taints of
// machine.nodeLabels, machine.nodeTaints and the control plane's role are
// set on the Node, those Talos set before and no longer wants are removed,
// and what it owns is recorded in the talos.dev/owned-labels and
// talos.dev/owned-taints annotations (machinery constants.
// AnnotationOwnedLabels, AnnotationOwnedTaints; siderolabs/talos
// internal/app/machined/pkg/controllers/k8s/node_apply.go). It writes
// with the cluster admin's credentials: NodeRestriction refuses a kubelet
// the node-role labels.
func (rk *realKube) applyOwned(ctx context.Context, reg realKubelet) error {
	admin, err := rk.adminLocked()
	if err != nil {
		return err
	}

	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		node, err := admin.CoreV1().Nodes().Get(ctx, reg.cfg.Name, metav1.GetOptions{})
		if err != nil {
			return err
		}

		setOwnedLabels(node, reg.labels)
		setOwnedTaints(node, reg.taints)

		_, err = admin.CoreV1().Nodes().Update(ctx, node, metav1.UpdateOptions{FieldManager: "talos"})

		return err
	})
}

// adminLocked is the cluster admin's client. Called with rk.mu held.
func (rk *realKube) adminLocked() (*kubernetes.Clientset, error) {
	if rk.admin != nil {
		return rk.admin, nil
	}

	admin, err := rk.cp.Client("admin", "system:masters")
	if err != nil {
		return nil, err
	}

	rk.admin = admin

	return admin, nil
}

func setOwnedLabels(node *corev1.Node, want map[string]string) {
	if node.Labels == nil {
		node.Labels = map[string]string{}
	}

	for _, k := range ownedAnnotation(node, constants.AnnotationOwnedLabels) {
		if _, keep := want[k]; !keep {
			delete(node.Labels, k)
		}
	}

	maps.Copy(node.Labels, want)
	recordOwned(node, constants.AnnotationOwnedLabels, slices.Collect(maps.Keys(want)))
}

func setOwnedTaints(node *corev1.Node, want []corev1.Taint) {
	key := func(t corev1.Taint) string { return t.Key + ":" + string(t.Effect) }
	owned := ownedAnnotation(node, constants.AnnotationOwnedTaints)

	node.Spec.Taints = slices.DeleteFunc(node.Spec.Taints, func(t corev1.Taint) bool {
		return slices.Contains(owned, key(t)) || slices.ContainsFunc(want, func(w corev1.Taint) bool { return key(w) == key(t) })
	})

	keys := make([]string, 0, len(want))

	for _, t := range want {
		node.Spec.Taints = append(node.Spec.Taints, t)
		keys = append(keys, key(t))
	}

	recordOwned(node, constants.AnnotationOwnedTaints, keys)
}

func ownedAnnotation(node *corev1.Node, annotation string) []string {
	var keys []string
	if err := json.Unmarshal([]byte(node.Annotations[annotation]), &keys); err != nil {
		return nil
	}

	return keys
}

func recordOwned(node *corev1.Node, annotation string, keys []string) {
	if node.Annotations == nil {
		node.Annotations = map[string]string{}
	}

	slices.SortFunc(keys, strings.Compare)

	b, _ := json.Marshal(keys) //nolint:errcheck // strings always encode
	node.Annotations[annotation] = string(b)
}
