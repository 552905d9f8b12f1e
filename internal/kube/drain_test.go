package kube

import (
	"context"
	"crypto/tls"
	"encoding/pem"
	"errors"
	"io"
	"log"
	"net/http/httptest"
	"net/netip"
	"slices"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"

	"github.com/ohmytalos/ohmytalos/internal/sandbox/kubefake"
)

// sandboxClient is a client against the sandbox's Kubernetes API server.
func sandboxClient(t *testing.T) *Client {
	t.Helper()
	s := kubefake.New(kubefake.Options{Version: "v1.36.3", PodCIDRs: []netip.Prefix{netip.MustParsePrefix("10.42.0.0/16")}, Resync: 20 * time.Millisecond})
	t.Cleanup(s.Close)
	hs := httptest.NewUnstartedServer(s)
	hs.Config.ErrorLog = log.New(io.Discard, "", 0)
	hs.TLS = &tls.Config{MinVersion: tls.VersionTLS12, ClientAuth: tls.RequestClientCert}
	hs.StartTLS()
	t.Cleanup(hs.Close)
	ca := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: hs.Certificate().Raw})
	c, err := NewForConfig(&rest.Config{Host: hs.URL, TLSClientConfig: rest.TLSClientConfig{CAData: ca}, Timeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func mustApply(t *testing.T, c *Client, o Object) {
	t.Helper()
	if _, err := c.Apply(context.Background(), o); err != nil {
		t.Fatalf("apply %v: %v", o["metadata"], err)
	}
}

// daemonSetPod waits for the sandbox's DaemonSet controller to run the
// cilium DaemonSet's pod on w-1, and names it.
func daemonSetPod(t *testing.T, c *Client) string {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		l, err := c.List(context.Background(), "v1", "Pod", "default", "app=cilium")
		if err == nil && len(l) == 1 && str(l[0], "spec", "nodeName") == "w-1" {
			return str(l[0], "metadata", "name")
		}
		if time.Now().After(deadline) {
			n, _ := c.Get(context.Background(), "v1", "Node", "", "w-1")
			t.Fatalf("no DaemonSet pod on w-1 after 10s: %v %v (node %v)", l, err, n)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// pod is a pod bound to node w-1, Ready, with an emptyDir volume when
// scratch.
func pod(t *testing.T, c *Client, name string, labels map[string]any, scratch bool) {
	t.Helper()
	md := Object{"name": name, "namespace": "default", "labels": labels}
	spec := Object{"nodeName": "w-1", "containers": []any{Object{"name": "c", "image": "registry.k8s.io/pause:3.10"}}}
	if scratch {
		spec["volumes"] = []any{Object{"name": "scratch", "emptyDir": Object{}}}
	}
	mustApply(t, c, Object{"apiVersion": "v1", "kind": "Pod", "metadata": md, "spec": spec})
	ctx := context.Background()
	pods := c.Dynamic().Resource(schema.GroupVersionResource{Version: "v1", Resource: "pods"}).Namespace("default")
	u, err := pods.Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	_ = unstructured.SetNestedField(u.Object, "Running", "status", "phase")
	_ = unstructured.SetNestedSlice(u.Object, []any{Object{"type": "Ready", "status": "True"}}, "status", "conditions")
	if _, err := pods.UpdateStatus(ctx, u, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
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

// TestDrainOnSandbox drains a node of the sandbox's API server with
// kubectl's drain library: the cordon, a plain pod and an emptyDir pod
// evicted, the DaemonSet pod kept; then a PodDisruptionBudget that allows
// no disruption holds a pod until the timeout, which names it.
func TestDrainOnSandbox(t *testing.T) {
	c := sandboxClient(t)
	ctx := context.Background()
	mustApply(t, c, Object{"apiVersion": "v1", "kind": "Node", "metadata": Object{"name": "w-1"}})
	if err := c.Cordon(ctx, "w-1"); err != nil {
		t.Fatal(err)
	}
	n, err := c.Get(ctx, "v1", "Node", "", "w-1")
	if err != nil || walk(n, "spec", "unschedulable") != true {
		t.Fatalf("cordoned node = %v, %v", n["spec"], err)
	}
	mustApply(t, c, Object{"apiVersion": "apps/v1", "kind": "DaemonSet", "metadata": Object{"name": "cilium", "namespace": "default"},
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
	if got := podNames(t, c); !slices.Equal(got, []string{dsPod}) {
		t.Errorf("pods after the drain = %v, want only the DaemonSet's", got)
	}
	mu.Lock()
	if !slices.Contains(heard, "evicted pod default/web") || !slices.Contains(heard, "evicted pod default/cache") {
		t.Errorf("progress = %v", heard)
	}
	mu.Unlock()

	pod(t, c, "guarded", map[string]any{"app": "db"}, false)
	mustApply(t, c, Object{"apiVersion": "policy/v1", "kind": "PodDisruptionBudget", "metadata": Object{"name": "db", "namespace": "default"},
		"spec": Object{"minAvailable": 1, "selector": Object{"matchLabels": Object{"app": "db"}}}})
	err = c.Drain(ctx, "w-1", DrainOptions{Timeout: 500 * time.Millisecond, RetryDelay: 50 * time.Millisecond})
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
	if err := c.DeleteNode(ctx, "w-1"); err != nil {
		t.Fatal(err)
	}
}
