package kube

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sort"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/kubectl/pkg/drain"
)

// Cordon marks a node unschedulable with kubectl's cordon helper (a
// strategic merge patch of spec.unschedulable). A node already gone
// answers ErrNotFound.
func (c *Client) Cordon(ctx context.Context, node string) error {
	return c.cordon(ctx, node, true)
}

// Uncordon marks a node schedulable again.
func (c *Client) Uncordon(ctx context.Context, node string) error {
	return c.cordon(ctx, node, false)
}

func (c *Client) cordon(ctx context.Context, node string, on bool) error {
	path := "/api/v1/nodes/" + node
	n, err := c.typed.CoreV1().Nodes().Get(ctx, node, metav1.GetOptions{})
	if err != nil {
		return wrap(http.MethodGet, path, err)
	}
	if err := drain.RunCordonOrUncordon(&drain.Helper{Ctx: ctx, Client: c.typed}, n, on); err != nil {
		return wrap(http.MethodPatch, path, err)
	}
	return nil
}

// DeleteNode deletes a Node object; a node already gone counts as deleted.
func (c *Client) DeleteNode(ctx context.Context, node string) error {
	err := c.typed.CoreV1().Nodes().Delete(ctx, node, metav1.DeleteOptions{})
	if apierrors.IsNotFound(err) {
		return nil
	}
	return wrap(http.MethodDelete, "/api/v1/nodes/"+node, err)
}

// DrainOptions tune Drain.
type DrainOptions struct {
	// Timeout bounds the whole drain (evictions and the wait for the pods
	// to go).
	Timeout time.Duration
	// RetryDelay is the pause before asking again for an eviction that a
	// PodDisruptionBudget refused (429).
	RetryDelay time.Duration
	// Progress, when set, hears each pod's eviction start and end. It may
	// be called from several goroutines at once.
	Progress func(string)
}

// DrainIncomplete is a drain that ran out of time: the pods still on the
// node (namespace/name) and those a PodDisruptionBudget kept there.
type DrainIncomplete struct {
	Node    string
	Timeout time.Duration
	Left    []string
	Blocked []string
	// Err is kubectl drain's own error.
	Err error
}

func (e *DrainIncomplete) Error() string {
	return fmt.Sprintf("drain node %s: %d pods still there after %s (%s): %v", e.Node, len(e.Left), e.Timeout, strings.Join(e.Left, ", "), e.Err)
}

func (e *DrainIncomplete) Unwrap() error { return e.Err }

// Drain evicts the pods of a cordoned node with kubectl's drain library,
// configured as talosctl configures it for upgrades (siderolabs/
// go-kubernetes kubernetes/nodedrain/nodedrain.go, Drain): evictions
// through the Eviction subresource, so PodDisruptionBudgets are honoured;
// each pod's own grace period; DaemonSet and mirror pods stay; emptyDir
// data goes with its pod; pods without a controller are evicted too
// (Force); the drain waits for the pods listed at its start (by UID) to
// go, within Timeout. Running out of time answers *DrainIncomplete.
func (c *Client) Drain(ctx context.Context, node string, o DrainOptions) error {
	refused := &refusals{first: o.Progress}
	cfg := c.RESTConfig()
	cfg.Wrap(refused.wrap)
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return fmt.Errorf("drain node %s: %w", node, err)
	}
	dctx, cancel := context.WithTimeout(ctx, o.Timeout)
	defer cancel()
	h := &drain.Helper{
		Ctx: dctx, Client: cs, Force: true, GracePeriodSeconds: -1,
		IgnoreAllDaemonSets: true, DeleteEmptyDirData: true, Timeout: o.Timeout,
		EvictErrorRetryDelay: o.RetryDelay, Out: io.Discard, ErrOut: io.Discard,
	}
	if o.Progress != nil {
		h.OnPodDeletionOrEvictionStarted = func(p *corev1.Pod, _ bool) {
			if refused.seen(p.Namespace, p.Name) == 0 {
				o.Progress("evicting pod " + p.Namespace + "/" + p.Name)
			}
		}
		h.OnPodDeletionOrEvictionFinished = func(p *corev1.Pod, _ bool, err error) {
			if err == nil {
				o.Progress("evicted pod " + p.Namespace + "/" + p.Name)
			}
		}
	}
	// drain.RunNodeDrain in two halves, to keep the list of pods.
	list, errs := h.GetPodsForDeletion(node)
	if len(errs) > 0 {
		return fmt.Errorf("drain node %s: list its pods: %w", node, errors.Join(errs...))
	}
	pods := list.Pods()
	err = h.DeleteOrEvictPods(pods)
	switch {
	case err == nil:
		return nil
	case ctx.Err() != nil:
		return fmt.Errorf("drain node %s: %w", node, ctx.Err())
	case dctx.Err() == nil:
		return fmt.Errorf("drain node %s: %w", node, err)
	}
	left, lerr := c.remaining(ctx, pods)
	if lerr != nil {
		return fmt.Errorf("drain node %s: %w (and listing what is left failed: %w)", node, err, lerr)
	}
	var blocked []string
	for _, p := range left {
		ns, name, _ := strings.Cut(p, "/")
		if refused.seen(ns, name) > 0 {
			blocked = append(blocked, p)
		}
	}
	return &DrainIncomplete{Node: node, Timeout: o.Timeout, Left: left, Blocked: blocked, Err: err}
}

// remaining names the pods of a drain still there (same UID).
func (c *Client) remaining(ctx context.Context, pods []corev1.Pod) ([]string, error) {
	var left []string
	for _, p := range pods {
		cur, err := c.typed.CoreV1().Pods(p.Namespace).Get(ctx, p.Name, metav1.GetOptions{})
		switch {
		case apierrors.IsNotFound(err):
			continue
		case err != nil:
			return nil, wrap(http.MethodGet, "/api/v1/namespaces/"+p.Namespace+"/pods/"+p.Name, err)
		case cur.UID == p.UID:
			left = append(left, p.Namespace+"/"+p.Name)
		}
	}
	sort.Strings(left)
	return left, nil
}

// refusals counts, per pod, the evictions the API server refused with 429
// TooManyRequests: what kube-apiserver answers when a PodDisruptionBudget
// forbids one (pkg/registry/core/pod/storage/eviction.go). It watches the
// HTTP answers rather than kubectl drain's log lines.
type refusals struct {
	mu    sync.Mutex
	count map[string]int
	// first, when set, hears a pod's first refusal.
	first func(string)
}

func (r *refusals) seen(ns, name string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.count[ns+"/"+name]
}

func (r *refusals) wrap(rt http.RoundTripper) http.RoundTripper {
	return roundTripFunc(func(req *http.Request) (*http.Response, error) {
		resp, err := rt.RoundTrip(req)
		if err == nil && resp.StatusCode == http.StatusTooManyRequests && req.Method == http.MethodPost {
			if ns, name, ok := evictionTarget(req.URL.Path); ok {
				r.mu.Lock()
				if r.count == nil {
					r.count = map[string]int{}
				}
				r.count[ns+"/"+name]++
				n := r.count[ns+"/"+name]
				r.mu.Unlock()
				if n == 1 && r.first != nil {
					r.first("a PodDisruptionBudget holds back " + ns + "/" + name + " for now")
				}
			}
		}
		return resp, err
	})
}

// evictionTarget reads /api/v1/namespaces/NS/pods/NAME/eviction.
func evictionTarget(path string) (ns, name string, ok bool) {
	parts := strings.Split(strings.Trim(path, "/"), "/")
	if len(parts) != 7 || parts[0] != "api" || parts[2] != "namespaces" || parts[4] != "pods" || parts[6] != "eviction" {
		return "", "", false
	}
	return parts[3], parts[5], true
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }
