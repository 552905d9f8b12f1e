package kubereal

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"net/netip"
	"slices"
	"strings"
	"sync"
	"time"

	coordv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/strategicpatch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	clientretry "k8s.io/client-go/util/retry"
)

// KubeletConfig is one simulated kubelet: what it registers.
type KubeletConfig struct {
	Name       string
	Version    string // e.g. v1.36.3, the kubelet image's tag
	OSImage    string // status.nodeInfo.osImage, e.g. "Talos (v1.13.9)"
	InternalIP string
	ExternalIP string
	Labels     map[string]string
	Taints     []corev1.Taint
	// PodStart is how long a pod takes from bound to Running (container
	// start, beside the image pulls); default the control plane's
	// Timing.PodStart.
	PodStart time.Duration
	// PullDelay is how long pulling an image takes on this node (the
	// sandbox's per-image latency); nil pulls at once. Each image is
	// pulled once per node, one pull at a time.
	PullDelay func(image string) time.Duration
	// PullError is the container runtime's error pulling an image on this
	// node, "" when the pull succeeds; nil: every pull succeeds.
	PullError func(image string) string
	// JobRun is how long a Job's pod runs before its containers exit 0;
	// default 1s.
	JobRun time.Duration
}

// Kubelet is a simulated kubelet: a client-go controller with the node's
// own credentials (system:node:NAME in system:nodes), so Node
// authorization and NodeRestriction judge it as they judge a real one. It
// registers its Node, renews its Lease, runs the pods bound to it, and
// reports Ready only once a CNI DaemonSet's pod runs on it.
type Kubelet struct {
	cfg    KubeletConfig
	client *kubernetes.Clientset
	admin  *kubernetes.Clientset
	poll   *poller
	// pods and node are the kubelet's watches (see watch).
	pods, node cache.SharedInformer
	stopWatch  context.CancelFunc

	trace *trace

	mu       sync.Mutex
	seen     map[types.UID]*podSeen
	started  int
	lastBeat time.Time
	imgs     images
}

// Timings of the kubelet (kubelet defaults: nodeStatusUpdateFrequency
// 10s, nodeLeaseDurationSeconds 40).
const (
	kubeletSync      = 500 * time.Millisecond
	kubeletHeartbeat = 10 * time.Second
	leaseDuration    = int32(40)
	cniConfDir       = "/etc/cni/net.d"
	msgNoCNI         = "container runtime network not ready: NetworkReady=false reason:NetworkPluginNotReady message:Network plugin returns error: cni plugin not initialized"
)

// StartKubelet registers the node and runs its kubelet until ctx ends or
// Stop is called.
func (c *ControlPlane) StartKubelet(ctx context.Context, cfg KubeletConfig) (*Kubelet, error) {
	if cfg.PodStart == 0 {
		cfg.PodStart = c.cfg.Timing.podStart()
	}

	if cfg.JobRun == 0 {
		cfg.JobRun = time.Second
	}

	client, err := c.Client("system:node:"+cfg.Name, "system:nodes")
	if err != nil {
		return nil, err
	}

	admin, err := c.Client("system:admin", "system:masters")
	if err != nil {
		return nil, err
	}

	k := &Kubelet{cfg: cfg, client: client, admin: admin, seen: map[types.UID]*podSeen{}, trace: &c.trace,
		imgs: images{ready: map[string]time.Time{}, fails: map[string]int{}}}

	if err := k.register(ctx); err != nil {
		return nil, err
	}

	// The loop reads the watches, and the watches wake the loop: both
	// exist before either runs.
	k.watch()
	k.poll = startPoller(ctx, c.cfg.Timing.kubeletSync(), k.sync)
	k.runWatches(ctx)

	return k, nil
}

// watch makes the kubelet's two watches, as a real kubelet's: the pods
// bound to its node (pkg/kubelet/config/apiserver.go, a ListWatch with
// the field selector spec.nodeName=NAME) and its own Node (kubelet.go's
// node informer, metadata.name=NAME). The sync loop reads them instead of
// listing on every period, and wakes on every change they see: a new pod
// starts at once, and an idle node costs the API server nothing between
// heartbeats.
func (k *Kubelet) watch() {
	rest := k.client.CoreV1().RESTClient()
	k.pods = cache.NewSharedInformer(cache.NewListWatchFromClient(rest, "pods", metav1.NamespaceAll,
		fields.OneTermEqualSelector("spec.nodeName", k.cfg.Name)), &corev1.Pod{}, 0)
	k.node = cache.NewSharedInformer(cache.NewListWatchFromClient(rest, "nodes", metav1.NamespaceAll,
		fields.OneTermEqualSelector(metav1.ObjectNameField, k.cfg.Name)), &corev1.Node{}, 0)
}

// runWatches runs the watches until Stop or ctx ends; every change wakes
// the sync loop.
func (k *Kubelet) runWatches(ctx context.Context) {
	ctx, k.stopWatch = context.WithCancel(ctx)
	wake := cache.ResourceEventHandlerFuncs{
		AddFunc:    func(any) { k.poll.wakeAfter(0) },
		UpdateFunc: func(any, any) { k.poll.wakeAfter(0) },
		DeleteFunc: func(any) { k.poll.wakeAfter(0) },
	}

	for _, inf := range []cache.SharedInformer{k.pods, k.node} {
		_, _ = inf.AddEventHandler(wake) //nolint:errcheck // fails only once the informer stopped
		go inf.RunWithContext(ctx)
	}
}

// Client is a client-go clientset authenticated as cn in groups orgs by a
// certificate from the cluster's CA.
func (c *ControlPlane) Client(cn string, orgs ...string) (*kubernetes.Clientset, error) {
	cfg, err := c.RESTConfig(cn, orgs...)
	if err != nil {
		return nil, err
	}

	return kubernetes.NewForConfig(cfg)
}

// Stop ends the kubelet's loop; the Node stays, and turns Unknown once its
// Lease expires, as when a real kubelet stops.
func (k *Kubelet) Stop() {
	k.poll.stop()
	k.stopWatch()
}

// kubeletMayLabel says whether NodeRestriction lets a kubelet set the
// label itself (k8s.io/kubernetes pkg/kubelet/apis/well_known_labels.go
// IsKubeletLabel): labels outside the kubernetes.io and k8s.io namespaces,
// and the well-known ones inside. Talos sets the others (node-role...) with
// its own credentials after registration.
func kubeletMayLabel(key string) bool {
	ns, _, ok := strings.Cut(key, "/")
	if !ok {
		return true
	}

	if ns != "kubernetes.io" && !strings.HasSuffix(ns, ".kubernetes.io") && ns != "k8s.io" && !strings.HasSuffix(ns, ".k8s.io") {
		return true
	}

	for _, prefix := range []string{"kubelet.kubernetes.io", "node.kubernetes.io"} {
		if ns == prefix || strings.HasSuffix(ns, "."+prefix) {
			return true
		}
	}

	switch key {
	case "kubernetes.io/hostname", "kubernetes.io/arch", "kubernetes.io/os", "node.kubernetes.io/instance-type",
		"topology.kubernetes.io/region", "topology.kubernetes.io/zone", "beta.kubernetes.io/arch", "beta.kubernetes.io/os",
		"beta.kubernetes.io/instance-type", "failure-domain.beta.kubernetes.io/region", "failure-domain.beta.kubernetes.io/zone":
		return true
	}

	return false
}

func (k *Kubelet) register(ctx context.Context) error {
	own, other := map[string]string{"kubernetes.io/hostname": k.cfg.Name, "kubernetes.io/os": "linux", "kubernetes.io/arch": "amd64"}, map[string]string{}

	for key, v := range k.cfg.Labels {
		if kubeletMayLabel(key) {
			own[key] = v
		} else {
			other[key] = v
		}
	}

	// The kubelet leaves attaching to the attach-detach controller
	// (enableControllerAttachDetach, default true; kubelet_node_status.go).
	ann := map[string]string{"volumes.kubernetes.io/controller-managed-attach-detach": "true"}
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: k.cfg.Name, Labels: own, Annotations: ann}, Spec: corev1.NodeSpec{Taints: k.cfg.Taints}}

	_, err := k.client.CoreV1().Nodes().Create(ctx, node, metav1.CreateOptions{})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("kubelet %s registers its node: %w", k.cfg.Name, err)
	}

	if len(other) > 0 {
		if err := k.labelAsTalos(ctx, other); err != nil {
			return err
		}
	}

	if err := k.postStatus(ctx, false); err != nil {
		return err
	}

	holder, dur := k.cfg.Name, leaseDuration
	lease := &coordv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: k.cfg.Name, Namespace: corev1.NamespaceNodeLease},
		Spec: coordv1.LeaseSpec{HolderIdentity: &holder, LeaseDurationSeconds: &dur, RenewTime: &metav1.MicroTime{Time: time.Now()}}}

	if _, err := k.client.CoordinationV1().Leases(corev1.NamespaceNodeLease).Create(ctx, lease, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("kubelet %s takes its lease: %w", k.cfg.Name, err)
	}

	return nil
}

// labelAsTalos sets the labels a kubelet may not, as Talos' node labels
// controller does with its own credentials.
func (k *Kubelet) labelAsTalos(ctx context.Context, labels map[string]string) error {
	// Read again on a conflict: the controllers change a new Node too.
	err := clientretry.RetryOnConflict(clientretry.DefaultRetry, func() error {
		n, err := k.admin.CoreV1().Nodes().Get(ctx, k.cfg.Name, metav1.GetOptions{})
		if err != nil {
			return err
		}

		if n.Labels == nil {
			n.Labels = map[string]string{}
		}

		maps.Copy(n.Labels, labels)

		_, err = k.admin.CoreV1().Nodes().Update(ctx, n, metav1.UpdateOptions{})

		return err
	})
	if err != nil {
		return fmt.Errorf("label node %s: %w", k.cfg.Name, err)
	}

	return nil
}

// sync runs the node's pods, and posts its status and renews its Lease
// on every heartbeat and when its network readiness changed.
func (k *Kubelet) sync(ctx context.Context) bool {
	if !k.pods.HasSynced() || !k.node.HasSynced() {
		return true // the watches' first list is not in yet
	}

	network := k.syncPods(ctx)

	k.mu.Lock()
	beat := time.Since(k.lastBeat) >= kubeletHeartbeat
	k.mu.Unlock()

	if beat || network != k.ready() {
		_ = k.postStatus(ctx, network) //nolint:errcheck // retried on the next beat
		k.renewLease(ctx)
	}

	return true
}

// ready is the Ready condition the API server holds for the node.
func (k *Kubelet) ready() bool {
	obj, ok, err := k.node.GetStore().GetByKey(k.cfg.Name)
	if err != nil || !ok {
		return false
	}

	n, _ := obj.(*corev1.Node)
	if n == nil {
		return false
	}

	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.Status == corev1.ConditionTrue
		}
	}

	return false
}

// postStatus patches the node's status as the real kubelet does
// (k8s.io/component-helpers node/util PatchNodeStatus: a two-way strategic
// merge patch of the status, with no resourceVersion), so it never
// conflicts with the controllers that change the Node meanwhile (its pod
// CIDR, its taints, Talos' labels).
func (k *Kubelet) postStatus(ctx context.Context, network bool) error {
	old, err := k.client.CoreV1().Nodes().Get(ctx, k.cfg.Name, metav1.GetOptions{})
	if err != nil {
		return err
	}

	n := old.DeepCopy()

	capacity := corev1.ResourceList{
		corev1.ResourceCPU: resource.MustParse("4"), corev1.ResourceMemory: resource.MustParse("8Gi"),
		corev1.ResourcePods: resource.MustParse("110"), corev1.ResourceEphemeralStorage: resource.MustParse("100Gi"),
	}
	n.Status.Capacity, n.Status.Allocatable = capacity, capacity
	// The addresses are the kubelet's until a cloud controller sets them.
	if len(n.Status.Addresses) == 0 {
		n.Status.Addresses = []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: k.cfg.InternalIP}, {Type: corev1.NodeHostName, Address: k.cfg.Name}}

		if k.cfg.ExternalIP != "" {
			n.Status.Addresses = append(n.Status.Addresses, corev1.NodeAddress{Type: corev1.NodeExternalIP, Address: k.cfg.ExternalIP})
		}
	}

	osImage := k.cfg.OSImage
	if osImage == "" {
		osImage = "Talos (v1.13.9)"
	}

	n.Status.NodeInfo = corev1.NodeSystemInfo{KubeletVersion: k.cfg.Version, OSImage: osImage, KernelVersion: "6.18.0-talos",
		ContainerRuntimeVersion: "containerd://2.1.0", OperatingSystem: "linux", Architecture: "amd64"}

	ready := corev1.NodeCondition{Type: corev1.NodeReady, Status: corev1.ConditionFalse, Reason: "KubeletNotReady", Message: msgNoCNI}
	if network {
		ready = corev1.NodeCondition{Type: corev1.NodeReady, Status: corev1.ConditionTrue, Reason: "KubeletReady", Message: "kubelet is posting ready status"}
	}

	now := metav1.Now()
	ready.LastHeartbeatTime, ready.LastTransitionTime = now, now

	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady && c.Status == ready.Status {
			ready.LastTransitionTime = c.LastTransitionTime
		}
	}

	// The kubelet owns Ready; others (the route controller's
	// NetworkUnavailable) stay.
	n.Status.Conditions = append(slices.DeleteFunc(n.Status.Conditions, func(c corev1.NodeCondition) bool { return c.Type == corev1.NodeReady }), ready)

	oldJSON, err := json.Marshal(old)
	if err != nil {
		return err
	}

	newJSON, err := json.Marshal(n)
	if err != nil {
		return err
	}

	patch, err := strategicpatch.CreateTwoWayMergePatch(oldJSON, newJSON, corev1.Node{})
	if err != nil {
		return err
	}

	if _, err := k.client.CoreV1().Nodes().Patch(ctx, k.cfg.Name, types.StrategicMergePatchType, patch, metav1.PatchOptions{}, "status"); err != nil {
		return err
	}

	k.mu.Lock()
	k.lastBeat = time.Now()
	k.mu.Unlock()

	return nil
}

func (k *Kubelet) renewLease(ctx context.Context) {
	l, err := k.client.CoordinationV1().Leases(corev1.NamespaceNodeLease).Get(ctx, k.cfg.Name, metav1.GetOptions{})
	if err != nil {
		return
	}

	l.Spec.RenewTime = &metav1.MicroTime{Time: time.Now()}
	_, _ = k.client.CoordinationV1().Leases(corev1.NamespaceNodeLease).Update(ctx, l, metav1.UpdateOptions{}) //nolint:errcheck // next beat retries
}

// syncPods runs the pods bound to the node: Running and Ready once
// PodStart has passed, deleted for good once the API server marked them
// for deletion (the kubelet's final delete). It reports whether a CNI
// DaemonSet pod (one mounting the host's /etc/cni/net.d) runs here.
//
// It reads the pods from its watch: a copy of each, as what follows
// changes its status before writing it. A pod the watch has not caught
// up on yet is written with its older resourceVersion, which the API
// server refuses (a conflict), and the next sync retries on the newer.
func (k *Kubelet) syncPods(ctx context.Context) bool {
	network := false

	for _, obj := range k.pods.GetStore().List() {
		cached, ok := obj.(*corev1.Pod)
		if !ok {
			continue
		}

		p := cached.DeepCopy()

		if p.DeletionTimestamp != nil {
			zero := int64(0)
			_ = k.client.CoreV1().Pods(p.Namespace).Delete(ctx, p.Name, metav1.DeleteOptions{GracePeriodSeconds: &zero, Preconditions: &metav1.Preconditions{UID: &p.UID}}) //nolint:errcheck // retried next sync

			continue
		}

		if p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed {
			continue
		}

		if p.Status.Phase != corev1.PodRunning {
			k.start(ctx, p)

			continue
		}

		if isJobPod(p) {
			k.complete(ctx, p)

			continue
		}

		if isCNIPod(p) && podReady(p) {
			network = true
		}
	}

	return network
}

func (k *Kubelet) start(ctx context.Context, p *corev1.Pod) {
	k.mu.Lock()
	ps, ok := k.seen[p.UID]

	if !ok {
		ps = &podSeen{first: time.Now()}
		k.seen[p.UID] = ps
	}
	k.mu.Unlock()

	if left := k.cfg.PodStart - time.Since(ps.first); left > 0 {
		if !ok {
			k.poll.wakeAfter(left)
		}

		return
	}

	// The kubelet waits for the pod's volumes (syncPod:
	// WaitForAttachAndMount), then pulls before it creates a container
	// (kuberuntime startContainer: EnsureImageExists first).
	if !k.volumesAttached(ctx, p) {
		k.setWaiting(ctx, p, nil)

		return
	}

	if ws := k.pull(ctx, p, ps); ws != nil {
		k.setWaiting(ctx, p, ws)

		return
	}

	if msg := k.configError(ctx, p); msg != "" {
		ws := map[string]waiting{}
		for _, c := range p.Spec.Containers {
			ws[c.Name] = waiting{"CreateContainerConfigError", msg}
		}

		k.setWaiting(ctx, p, ws)

		return
	}

	k.mu.Lock()
	k.started++
	n := k.started
	k.mu.Unlock()

	now := metav1.Now()
	ip := k.podIP(ctx, p, n)
	p.Status.Phase = corev1.PodRunning
	p.Status.HostIP, p.Status.PodIP = k.cfg.InternalIP, ip
	p.Status.HostIPs, p.Status.PodIPs = []corev1.HostIP{{IP: k.cfg.InternalIP}}, []corev1.PodIP{{IP: ip}}
	p.Status.StartTime = &now
	p.Status.Conditions = []corev1.PodCondition{
		{Type: corev1.PodScheduled, Status: corev1.ConditionTrue, LastTransitionTime: now},
		{Type: corev1.PodInitialized, Status: corev1.ConditionTrue, LastTransitionTime: now},
		{Type: corev1.ContainersReady, Status: corev1.ConditionTrue, LastTransitionTime: now},
		{Type: corev1.PodReady, Status: corev1.ConditionTrue, LastTransitionTime: now},
	}
	p.Status.ContainerStatuses = nil

	for _, c := range p.Spec.Containers {
		p.Status.ContainerStatuses = append(p.Status.ContainerStatuses, corev1.ContainerStatus{
			Name: c.Name, Image: c.Image, ImageID: c.Image, Ready: true, Started: new(true),
			State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: now}},
		})
	}

	if _, err := k.client.CoreV1().Pods(p.Namespace).UpdateStatus(ctx, p, metav1.UpdateOptions{}); err != nil {
		return // retried next sync
	}

	k.ran(p, ps)
}

// ran records the pod's modelled wait, once, and wakes the kubelet for
// what follows at once: a CNI pod's node turns Ready, a Job's pod ends.
func (k *Kubelet) ran(p *corev1.Pod, ps *podSeen) {
	k.mu.Lock()
	done := ps.recorded
	ps.recorded = true
	k.mu.Unlock()

	if done {
		return
	}

	w := PodWait{Namespace: p.Namespace, Name: p.Name, Node: k.cfg.Name, CNI: isCNIPod(p), Seen: ps.first, Running: time.Now(),
		Start: k.cfg.PodStart, Pull: ps.pull}
	for _, c := range p.Spec.Containers {
		w.Images = append(w.Images, c.Image)
	}

	k.trace.add(w)

	switch {
	case w.CNI:
		k.poll.wakeAfter(0)
	case isJobPod(p):
		k.poll.wakeAfter(k.cfg.JobRun)
	}
}

// podSeen is what the kubelet knows of a pod it has not run yet: when it
// first saw it, and its modelled pulls once asked for.
type podSeen struct {
	first    time.Time
	pulling  bool
	pull     time.Duration
	recorded bool
}

// podIP is the node's address for host-network pods, else an address of
// the node's pod CIDR (the IPAM controller's assignment).
func (k *Kubelet) podIP(ctx context.Context, p *corev1.Pod, n int) string {
	if p.Spec.HostNetwork {
		return k.cfg.InternalIP
	}

	node, err := k.client.CoreV1().Nodes().Get(ctx, k.cfg.Name, metav1.GetOptions{})
	if err != nil || node.Spec.PodCIDR == "" {
		return k.cfg.InternalIP
	}

	pfx, err := netip.ParsePrefix(node.Spec.PodCIDR)
	if err != nil {
		return k.cfg.InternalIP
	}

	a := pfx.Masked().Addr()
	for range n%250 + 1 {
		a = a.Next()
	}

	return a.String()
}

func isCNIPod(p *corev1.Pod) bool {
	owner := metav1.GetControllerOf(p)
	if owner == nil || owner.Kind != "DaemonSet" {
		return false
	}

	for _, v := range p.Spec.Volumes {
		if v.HostPath != nil && strings.TrimSuffix(v.HostPath.Path, "/") == cniConfDir {
			return true
		}
	}

	return false
}

func podReady(p *corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}

	return false
}
