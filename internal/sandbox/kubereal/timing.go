package kubereal

import (
	"cmp"
	"context"
	"slices"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"
)

// Timing paces the simulations on a control plane (the sandbox's time
// model, sandbox.HetznerLatency, scales them); a zero field keeps its
// default.
type Timing struct {
	// PodStart is how long a simulated kubelet takes to start a pod's
	// containers (beside the image pulls) until the pod is Running and
	// Ready; default 500ms. A KubeletConfig's own PodStart wins.
	PodStart time.Duration
	// KubeletSync is how often a simulated kubelet lists its pods; it
	// also wakes as soon as a modelled wait (a pod start, a pull) ends, so
	// the period only delays noticing new and deleted pods. Default 500ms.
	KubeletSync time.Duration
	// CloudSync is how often the simulated cloud controller's node
	// controller and the cilium operator look; default 1s.
	CloudSync time.Duration
}

func (t Timing) podStart() time.Duration { return cmp.Or(t.PodStart, 500*time.Millisecond) }

func (t Timing) kubeletSync() time.Duration { return cmp.Or(t.KubeletSync, kubeletSync) }

func (t Timing) cloudSync() time.Duration { return cmp.Or(t.CloudSync, cloudSync) }

// PodWait is what the sandbox's model made one pod wait on its node
// before it ran: the modelled pod start and its image pulls, the queue
// behind the node's earlier pulls included. Benchmarks compare a run
// against the longest chain of these (sandbox.CriticalPath).
type PodWait struct {
	Namespace, Name, Node string
	Images                []string
	// CNI: a CNI DaemonSet's pod (its node is Ready once it runs).
	CNI bool
	// Seen is when the kubelet first saw the pod bound to its node, and
	// Running when it reported it Running and Ready.
	Seen, Running time.Time
	// Start is the modelled container start (Timing.PodStart); Pull the
	// modelled pulls, from the pod's first pull request until its last
	// image is on the node (0 when every image was there).
	Start, Pull time.Duration
}

// Modelled is the pod's whole modelled wait.
func (w PodWait) Modelled() time.Duration { return w.Start + w.Pull }

// Has reports whether one of the pod's images is repo (any registry
// and tag).
func (w PodWait) Has(repo string) bool {
	return slices.ContainsFunc(w.Images, func(img string) bool { return imageIs(img, repo) })
}

// trace collects the control plane's measured start and its pods' waits.
type trace struct {
	mu sync.Mutex
	// apiReady is etcd's start to kube-apiserver's /readyz; controllers
	// then to kube-controller-manager's controllers running.
	apiReady, controllers time.Duration
	pods                  []PodWait
}

func (t *trace) add(w PodWait) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.pods = append(t.pods, w)
}

// Trace is a control plane's start, measured (a physical process start,
// which the time model does not scale), and the modelled waits of the
// pods its kubelets ran, in the order they ran.
type Trace struct {
	// APIServer is from etcd's start to kube-apiserver's /readyz.
	APIServer time.Duration
	// Controllers is from etcd's start to kube-controller-manager's
	// controllers running (its service account controller made
	// kube-system's default ServiceAccount); 0 while they do not.
	Controllers time.Duration
	Pods        []PodWait
}

// Trace returns what the control plane has recorded so far.
func (c *ControlPlane) Trace() Trace {
	c.trace.mu.Lock()
	defer c.trace.mu.Unlock()

	return Trace{APIServer: c.trace.apiReady, Controllers: c.trace.controllers, Pods: slices.Clone(c.trace.pods)}
}

// measureControllers records when kube-controller-manager's controllers
// run: its service account controller creates kube-system's default
// ServiceAccount as soon as it starts, before that no pod can be created
// there (the ServiceAccount admission plugin). It watches, so measuring
// adds no load while the controller manager starts.
func (c *ControlPlane) measureControllers(ctx context.Context, began time.Time) {
	admin, err := c.Client("system:admin", "system:masters")
	if err != nil {
		return
	}

	ctx, cancel := context.WithTimeout(ctx, apiServerReadyTimeout)
	defer cancel()

	go func() {
		select {
		case <-c.done:
			cancel()
		case <-ctx.Done():
		}
	}()

	sas := admin.CoreV1().ServiceAccounts("kube-system")
	sel := "metadata.name=default"

	for !c.controllersRun(ctx, sas, sel) {
		select {
		case <-ctx.Done():
			return
		case <-time.After(100 * time.Millisecond): // an API error: look again
		}
	}

	c.trace.mu.Lock()
	c.trace.controllers = time.Since(began)
	c.trace.mu.Unlock()
}

// controllersRun lists the ServiceAccounts sel selects, else watches
// until one is added: true once there is one, false on an error.
func (c *ControlPlane) controllersRun(ctx context.Context, sas typedcorev1.ServiceAccountInterface, sel string) bool {
	l, err := sas.List(ctx, metav1.ListOptions{FieldSelector: sel})
	if err != nil {
		return false
	}

	if len(l.Items) > 0 {
		return true
	}

	w, err := sas.Watch(ctx, metav1.ListOptions{FieldSelector: sel, ResourceVersion: l.ResourceVersion})
	if err != nil {
		return false
	}
	defer w.Stop()

	for ev := range w.ResultChan() {
		if ev.Type == watch.Added {
			return true
		}
	}

	return false
}

// CloudController reports whether the pod runs the hcloud cloud
// controller's image.
func (w PodWait) CloudController() bool { return w.Has(ccmImage) }
