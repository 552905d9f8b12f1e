package steps

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/ohmytalos/ohmytalos/internal/engine"
)

// TestDrainNode drains a worker of a sandbox cluster, which runs on the
// real control plane: kube-apiserver's eviction subresource and the
// disruption controller judge the budget, the simulated kubelet confirms
// the evicted pods' deletion.
func TestDrainNode(t *testing.T) {
	t.Parallel()
	checkDrain(t, smallWorld(t, "v1.13.9", "1.36.3"))
}

// checkDrain drains demo-worker-1 through the product's drain: a budget
// that allows no disruption holds its pod, and the timeout error names the
// node, the pod, the budget and the fix, with the node left cordoned; once
// the budget goes, the drain evicts the plain and the emptyDir pods and
// leaves the DaemonSet pods (Cilium's) where they are.
func checkDrain(t *testing.T, w *world) {
	t.Helper()
	ctx := context.Background()
	node := "demo-worker-1"
	cs := w.kubeClient(t)
	blockWithPDB(t, cs, node)
	scratch := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "scratch", Namespace: "default"},
		Spec: corev1.PodSpec{NodeName: node, Containers: []corev1.Container{{Name: "c", Image: "registry.k8s.io/pause:3.10"}},
			Volumes: []corev1.Volume{{Name: "tmp", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}}}}
	if _, err := cs.CoreV1().Pods("default").Create(ctx, scratch, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	daemons := daemonSetPods(t, cs, node)
	if len(daemons) == 0 {
		t.Fatalf("no DaemonSet pod on %s before the drain", node)
	}
	kc, err := w.deps().Kube(ctx, w.env(t))
	if err != nil {
		t.Fatal(err)
	}
	var evs []engine.Event
	emit := func(ev engine.Event) { evs = append(evs, ev) }
	err = drainNode(ctx, kc, node, 2*time.Second, 100*time.Millisecond, emit)
	if err == nil {
		t.Fatal("drain succeeded despite the PodDisruptionBudget")
	}
	for _, want := range []string{"drain node " + node, "default/blocker", "a PodDisruptionBudget forbids evicting default/blocker", "Fix:", "stays cordoned"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("drain error lacks %q: %v", want, err)
		}
	}
	if n, err := cs.CoreV1().Nodes().Get(ctx, node, metav1.GetOptions{}); err != nil || !n.Spec.Unschedulable {
		t.Fatalf("node after a failed drain: %v, unschedulable %v", err, n != nil && n.Spec.Unschedulable)
	}
	if !slices.ContainsFunc(evs, func(ev engine.Event) bool {
		return strings.Contains(ev.Message, "PodDisruptionBudget holds back default/blocker")
	}) {
		t.Errorf("no progress about the budget: %+v", evs)
	}

	if err := cs.PolicyV1().PodDisruptionBudgets("default").Delete(ctx, "blocker", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	evs = nil
	if err := drainNode(ctx, kc, node, time.Minute, 100*time.Millisecond, emit); err != nil {
		t.Fatal(err)
	}
	if !hasEvent(evs, engine.KindResource, engine.ActionUpdate, "node/"+node) || evs[len(evs)-1].Message != "drained" {
		t.Errorf("events = %+v, want cordoned ... drained", evs)
	}
	for _, name := range []string{"blocker", "scratch"} {
		if _, err := cs.CoreV1().Pods("default").Get(ctx, name, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			t.Errorf("pod %s after the drain: %v, want gone", name, err)
		}
	}
	if after := daemonSetPods(t, cs, node); !slices.Equal(after, daemons) {
		t.Errorf("DaemonSet pods on %s: %v before, %v after the drain", node, daemons, after)
	}
}

// daemonSetPods names the DaemonSet-owned pods on node.
func daemonSetPods(t *testing.T, cs *kubernetes.Clientset, node string) []string {
	t.Helper()
	pods, err := cs.CoreV1().Pods("").List(context.Background(), metav1.ListOptions{FieldSelector: "spec.nodeName=" + node})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, p := range pods.Items {
		if ref := metav1.GetControllerOf(&p); ref != nil && ref.Kind == "DaemonSet" {
			out = append(out, p.Namespace+"/"+p.Name)
		}
	}
	slices.Sort(out)
	return out
}
