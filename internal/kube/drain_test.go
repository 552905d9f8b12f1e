package kube

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/ohmytalos/ohmytalos/internal/sandbox/kubereal"
	"github.com/ohmytalos/ohmytalos/internal/sandbox/kubereal/kubetest"
)

// realClient is a client against a real control plane (kubereal: etcd,
// kube-apiserver, kube-controller-manager and kube-scheduler, configured
// as Talos configures them; kubetest starts it as kubereal's own tests
// do) with one simulated kubelet, w-1. It skips without go on PATH (the
// binaries are built from source on first use).
func realClient(t *testing.T) (*Client, *kubereal.Kubelet) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	cp := kubetest.Start(t, ctx, "drain")
	k, err := cp.StartKubelet(ctx, kubereal.KubeletConfig{Name: "w-1", Version: "v1.36.3", InternalIP: "10.0.2.1", PodStart: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(k.Stop)
	cfg, err := cp.RESTConfig("admin", "system:masters")
	if err != nil {
		t.Fatal(err)
	}
	cfg.Timeout = 10 * time.Second
	c, err := NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	// Pods need the namespace's default ServiceAccount, which the service
	// account controller creates once it runs.
	waitUntil(t, 30*time.Second, "the default ServiceAccount of namespace default", func() bool {
		_, err := c.Get(context.Background(), "v1", "ServiceAccount", "default", "default")
		return err == nil
	})
	return c, k
}

// waitUntil polls cond every 20ms, failing with what after timeout.
func waitUntil(t *testing.T, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not there after %s", what, timeout)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func mustApply(t *testing.T, c *Client, o Object) {
	t.Helper()
	if _, err := c.Apply(context.Background(), o); err != nil {
		t.Fatalf("apply %v: %v", o["metadata"], err)
	}
}

// daemonSetPod waits for the real DaemonSet controller and scheduler to
// run the cilium DaemonSet's pod on w-1, and names it.
func daemonSetPod(t *testing.T, c *Client) string {
	t.Helper()
	var name string
	waitUntil(t, 30*time.Second, "the cilium DaemonSet's pod on w-1", func() bool {
		l, err := c.List(context.Background(), "v1", "Pod", "kube-system", "app=cilium")
		if err == nil && len(l) == 1 && str(l[0], "spec", "nodeName") == "w-1" && str(l[0], "status", "phase") == "Running" {
			name = str(l[0], "metadata", "name")
			return true
		}
		return false
	})
	return name
}

// pod is a pod bound to node w-1 with an emptyDir volume when scratch,
// once w-1's kubelet reports it Ready.
func pod(t *testing.T, c *Client, name string, labels map[string]any, scratch bool) {
	t.Helper()
	md := Object{"name": name, "namespace": "default", "labels": labels}
	spec := Object{"nodeName": "w-1", "containers": []any{Object{"name": "c", "image": "registry.k8s.io/pause:3.10"}}}
	if scratch {
		spec["volumes"] = []any{Object{"name": "scratch", "emptyDir": Object{}}}
	}
	mustApply(t, c, Object{"apiVersion": "v1", "kind": "Pod", "metadata": md, "spec": spec})
	waitUntil(t, 30*time.Second, "pod "+name+" Ready on w-1", func() bool {
		p, err := c.Get(context.Background(), "v1", "Pod", "default", name)
		return err == nil && str(p, "status", "phase") == "Running"
	})
}

func podNames(t *testing.T, c *Client) []string {
	t.Helper()
	l, err := c.List(context.Background(), "v1", "Pod", "default", "")
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, p := range l {
		out = append(out, str(p, "metadata", "name"))
	}
	return out
}

// TestDrainOnRealKubernetes drains a node of a real control plane with
// kubectl's drain library: the cordon, a plain pod and an emptyDir pod
// evicted through kube-apiserver's eviction subresource (the simulated
// kubelet confirms their deletion), the DaemonSet pod kept; then a
// PodDisruptionBudget that allows no disruption (judged by the real
// disruption controller) holds a pod until the timeout, which names it.
func TestDrainOnRealKubernetes(t *testing.T) {
	c, kubelet := realClient(t)
	ctx := context.Background()
	if err := c.Cordon(ctx, "w-1"); err != nil {
		t.Fatal(err)
	}
	n, err := c.Get(ctx, "v1", "Node", "", "w-1")
	if err != nil || walk(n, "spec", "unschedulable") != true {
		t.Fatalf("cordoned node = %v, %v", n["spec"], err)
	}
	mustApply(t, c, Object{"apiVersion": "apps/v1", "kind": "DaemonSet", "metadata": Object{"name": "cilium", "namespace": "kube-system"},
		"spec": Object{"selector": Object{"matchLabels": Object{"app": "cilium"}}, "template": Object{
			"metadata": Object{"labels": Object{"app": "cilium"}}, "spec": Object{
				// Tolerating every taint, as Cilium's agent does.
				"tolerations": []any{Object{"operator": "Exists"}},
				"containers":  []any{Object{"name": "c", "image": "cilium"}}}}}})
	dsPod := daemonSetPod(t, c)
	pod(t, c, "web", map[string]any{"app": "web"}, false)
	pod(t, c, "cache", map[string]any{"app": "cache"}, true)

	var mu sync.Mutex
	var heard []string
	progress := func(s string) { mu.Lock(); heard = append(heard, s); mu.Unlock() }
	if err := c.Drain(ctx, "w-1", DrainOptions{Timeout: 20 * time.Second, RetryDelay: 50 * time.Millisecond, Progress: progress}); err != nil {
		t.Fatal(err)
	}
	if got := podNames(t, c); len(got) != 0 {
		t.Errorf("pods of namespace default after the drain = %v, want none", got)
	}
	if _, err := c.Get(ctx, "v1", "Pod", "kube-system", dsPod); err != nil {
		t.Errorf("the DaemonSet's pod %s after the drain: %v, want kept", dsPod, err)
	}
	mu.Lock()
	if !slices.Contains(heard, "evicted pod default/web") || !slices.Contains(heard, "evicted pod default/cache") {
		t.Errorf("progress = %v", heard)
	}
	mu.Unlock()

	pod(t, c, "guarded", map[string]any{"app": "db"}, false)
	mustApply(t, c, Object{"apiVersion": "policy/v1", "kind": "PodDisruptionBudget", "metadata": Object{"name": "db", "namespace": "default"},
		"spec": Object{"minAvailable": 1, "selector": Object{"matchLabels": Object{"app": "db"}}}})
	waitUntil(t, 30*time.Second, "the disruption controller's status of budget db", func() bool {
		b, err := c.Get(ctx, "policy/v1", "PodDisruptionBudget", "default", "db")
		return err == nil && fmt.Sprint(walk(b, "status", "currentHealthy")) == "1" && fmt.Sprint(walk(b, "status", "disruptionsAllowed")) == "0"
	})
	err = c.Drain(ctx, "w-1", DrainOptions{Timeout: 2 * time.Second, RetryDelay: 50 * time.Millisecond})
	var inc *DrainIncomplete
	if !errors.As(err, &inc) || !slices.Equal(inc.Left, []string{"default/guarded"}) || !slices.Equal(inc.Blocked, []string{"default/guarded"}) {
		t.Fatalf("drain against the budget: %v (%+v)", err, inc)
	}
	if err := c.Uncordon(ctx, "w-1"); err != nil {
		t.Fatal(err)
	}
	if n, _ := c.Get(ctx, "v1", "Node", "", "w-1"); walk(n, "spec", "unschedulable") == true {
		t.Error("uncordon left the node unschedulable")
	}
	if err := c.Cordon(ctx, "gone"); !errors.Is(err, ErrNotFound) {
		t.Errorf("cordon of a missing node: %v, want ErrNotFound", err)
	}
	if err := c.DeleteNode(ctx, "gone"); err != nil {
		t.Errorf("delete of a node already gone: %v", err)
	}
	kubelet.Stop() // a stopped kubelet registers its Node no more
	if err := c.DeleteNode(ctx, "w-1"); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Get(ctx, "v1", "Node", "", "w-1"); !errors.Is(err, ErrNotFound) {
		t.Errorf("node w-1 after its deletion: %v, want ErrNotFound", err)
	}
}
