package steps

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hetznercloud/hcloud-go/v2/hcloud"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/kubernetes"

	"github.com/ohmytalos/ohmytalos/internal/engine"
	"github.com/ohmytalos/ohmytalos/internal/spec"
	"github.com/ohmytalos/ohmytalos/internal/talos/talosapi"
)

// kubeClient is client-go on the stored kubeconfig: the operator's view.
func (w *world) kubeClient(t *testing.T) *kubernetes.Clientset {
	t.Helper()
	return kubeClientOf(t, w.env(t))
}

// runScaleDown runs only the scale-down step with a drain timeout.
func (w *world) runScaleDown(t *testing.T, ctx context.Context, timeout time.Duration, sink func(engine.Event)) error {
	t.Helper()
	d := w.deps()
	d.NodeTimeout = timeout
	return engine.New(All(d)...).Run(ctx, w.env(t), engine.Options{Only: StepScaleDown, Redact: d.Redact}, sink)
}

// waitNoNode polls until Kubernetes no longer lists the node.
func waitNoNode(t *testing.T, cs *kubernetes.Clientset, name string) {
	t.Helper()
	waitNoNodeWithin(t, cs, name, 20*time.Second)
}

// waitNoNodeWithin is waitNoNode with its own deadline.
func waitNoNodeWithin(t *testing.T, cs *kubernetes.Clientset, name string, within time.Duration) {
	t.Helper()
	waitForWithin(t, within, "node "+name+" to leave Kubernetes", func() (bool, string) {
		_, err := cs.CoreV1().Nodes().Get(context.Background(), name, metav1.GetOptions{})
		return apierrors.IsNotFound(err), fmt.Sprintf("err %v", err)
	})
}

// blockWithPDB runs a ready pod on node, guarded by a budget that allows
// no disruption.
func blockWithPDB(t *testing.T, cs *kubernetes.Clientset, node string) {
	t.Helper()
	ctx := context.Background()
	labels := map[string]string{"app": "blocker"}
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "blocker", Namespace: "default", Labels: labels},
		Spec: corev1.PodSpec{NodeName: node, Containers: []corev1.Container{{Name: "c", Image: "registry.k8s.io/pause:3.10"}}}}
	if _, err := cs.CoreV1().Pods("default").Create(ctx, pod, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	one := intstr.FromInt32(1)
	pdb := &policyv1.PodDisruptionBudget{ObjectMeta: metav1.ObjectMeta{Name: "blocker", Namespace: "default"},
		Spec: policyv1.PodDisruptionBudgetSpec{MinAvailable: &one, Selector: &metav1.LabelSelector{MatchLabels: labels}}}
	if _, err := cs.PolicyV1().PodDisruptionBudgets("default").Create(ctx, pdb, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitForWithin(t, 10*time.Second, "the blocker pod to be ready", func() (bool, string) {
		p, err := cs.CoreV1().Pods("default").Get(ctx, "blocker", metav1.GetOptions{})
		return err == nil && slices.ContainsFunc(p.Status.Conditions, func(c corev1.PodCondition) bool {
			return c.Type == corev1.PodReady && c.Status == corev1.ConditionTrue
		}), fmt.Sprintf("%v %+v", err, p)
	})
}

// TestScaleDownWorker lowers the worker pool from 2 to 1: a budget that
// forbids the drain fails it with the node, the pod and the fix, and
// deletes nothing; a run killed after the Kubernetes node was deleted
// resumes; then the highest-numbered worker's server, Node and load
// balancer target are gone, and the other worker stays.
func TestScaleDownWorker(t *testing.T) {
	t.Parallel()
	w := newWorld(t, "../examples/seed.yaml")
	w.Spec.Pools[0].VolumeSize = 10
	// The load balancer's label-selector target is ohmytalos's only with
	// the ingress off; with it on the cloud controller's server targets
	// follow the nodes (TestIngressServesOnTheFirstApply).
	off := false
	w.Spec.Addons.Ingress.Enabled = &off
	if _, err := w.apply(t, context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	cs := w.kubeClient(t)
	blockWithPDB(t, cs, "demo-worker-2")
	w.Spec.Pools[0].Count = 1

	it := w.planOf(t, StepScaleDown, "server", "demo-worker-2")
	if it.Action != engine.ActionDelete {
		t.Fatalf("plan for demo-worker-2 = %+v, want delete", it)
	}
	if it := w.planOf(t, StepScaleDown, "volume", "demo-worker-2-data"); it.Action != engine.ActionDelete {
		t.Fatalf("plan for the volume = %+v, want delete", it)
	}

	err := w.runScaleDown(t, context.Background(), 500*time.Millisecond, nil)
	if err == nil {
		t.Fatal("drain succeeded despite the PodDisruptionBudget")
	}
	for _, want := range []string{"demo-worker-2", "default/blocker", "PodDisruptionBudget", "Fix:"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("drain error lacks %q: %v", want, err)
		}
	}
	hc := w.client()
	if sv, _, _ := hc.Server.GetByName(context.Background(), "demo-worker-2"); sv == nil {
		t.Fatal("server deleted although the drain failed")
	}
	n, err := cs.CoreV1().Nodes().Get(context.Background(), "demo-worker-2", metav1.GetOptions{})
	if err != nil || !n.Spec.Unschedulable {
		t.Fatalf("node after a failed drain: %v, unschedulable %v", err, n != nil && n.Spec.Unschedulable)
	}

	// The operator relaxes the budget; the run is killed right after the
	// Kubernetes node is deleted.
	if err := cs.PolicyV1().PodDisruptionBudgets("default").Delete(context.Background(), "blocker", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	err = w.runScaleDown(t, ctx, time.Minute, func(ev engine.Event) {
		if ev.Kind == engine.KindResource && ev.Action == engine.ActionDelete && ev.Resource == "node/demo-worker-2" {
			cancel()
		}
	})
	cancel()
	if !errors.Is(err, context.Canceled) && (err == nil || !strings.Contains(err.Error(), "context canceled")) {
		t.Fatalf("interrupted run: %v", err)
	}
	if rec, ok := inProgress(w.env(t)); !ok || rec.Node != "demo-worker-2" {
		t.Fatalf("no removal recorded in progress after the kill: %+v", rec)
	}

	var evs []engine.Event
	if _, err := w.apply(t, context.Background(), func(ev engine.Event) { evs = append(evs, ev) }); err != nil {
		t.Fatal(err)
	}
	if !hasEvent(evs, engine.KindResource, engine.ActionDelete, "server/demo-worker-2") {
		t.Error("resumed apply did not delete server demo-worker-2")
	}
	checkWorkerGone(t, w, hc, cs)
}

func checkWorkerGone(t *testing.T, w *world, hc *hcloud.Client, cs *kubernetes.Clientset) {
	t.Helper()
	ctx := context.Background()
	if sv, _, err := hc.Server.GetByName(ctx, "demo-worker-2"); err != nil || sv != nil {
		t.Errorf("server demo-worker-2 still exists (%v)", err)
	}
	kept, _, err := hc.Server.GetByName(ctx, "demo-worker-1")
	if err != nil || kept == nil {
		t.Fatalf("server demo-worker-1 gone: %v", err)
	}
	waitNoNode(t, cs, "demo-worker-2")
	if _, err := cs.CoreV1().Nodes().Get(ctx, "demo-worker-1", metav1.GetOptions{}); err != nil {
		t.Errorf("node demo-worker-1: %v", err)
	}
	lbs, err := hc.LoadBalancer.All(ctx)
	if err != nil {
		t.Fatal(err)
	}
	ingress := 0
	for _, lb := range lbs {
		for _, tg := range lb.Targets {
			for _, sub := range tg.Targets {
				if sub.Server == nil || sub.Server.Server == nil {
					continue
				}
				if sub.Server.Server.ID == kept.ID {
					ingress++
				}
				if sv, _, _ := hc.Server.GetByID(ctx, sub.Server.Server.ID); sv == nil {
					t.Errorf("load balancer %s still targets deleted server %d", lb.Name, sub.Server.Server.ID)
				}
			}
		}
	}
	if ingress == 0 {
		t.Error("no load balancer targets demo-worker-1")
	}
	if v, _, err := hc.Volume.GetByName(ctx, "demo-worker-2-data"); err != nil || v != nil {
		t.Errorf("volume demo-worker-2-data still exists (%v)", err)
	}
	if v, _, err := hc.Volume.GetByName(ctx, "demo-worker-1-data"); err != nil || v == nil {
		t.Errorf("volume demo-worker-1-data gone (%v)", err)
	}
	if _, ok := w.env(t).State.Resource(serverKey("demo-worker-2")); ok {
		t.Error("state still records server demo-worker-2")
	}
	if rec, ok := inProgress(w.env(t)); ok {
		t.Errorf("removal still recorded in progress: %+v", rec)
	}
}

// TestScaleDownControlPlanes lowers the control planes from 3 to 1 and
// the workers, whose pool keeps volumes, from 2 to 1: the worker goes
// first and its volume stays; each control plane leaves etcd before its
// server is deleted, one at a time (a run killed after the first left
// resumes), and etcd ends with one member.
func TestScaleDownControlPlanes(t *testing.T) {
	t.Parallel()
	w := newWorld(t, "../examples/seed.yaml")
	w.Spec.Pools[0].VolumeSize, w.Spec.Pools[0].KeepVolumes = 10, true
	if _, err := w.apply(t, context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	moveVIPAway(t, w)
	w.Spec.ControlPlane.Count, w.Spec.Pools[0].Count = 1, 1
	if it := w.planOf(t, StepScaleDown, "volume", "demo-worker-2-data"); it.Action != engine.ActionReuse {
		t.Fatalf("plan for the kept volume = %+v, want reuse", it)
	}
	var order []string
	collect := func(ev engine.Event) {
		if ev.Step == StepScaleDown && ev.Kind == engine.KindResource && ev.Action == engine.ActionDelete {
			order = append(order, ev.Resource)
		}
		if ev.Step == StepScaleDown && ev.Kind == engine.KindProgress && strings.Contains(ev.Message, "etcd members after") {
			order = append(order, ev.Message)
		}
	}
	// Killed right after demo-cp-3 left etcd, before its server goes.
	ctx, cancel := context.WithCancel(context.Background())
	_ = w.runScaleDown(t, ctx, time.Minute, func(ev engine.Event) {
		collect(ev)
		if ev.Resource == "etcd/demo-cp-3" && ev.Action == engine.ActionDelete {
			cancel()
		}
	})
	cancel()
	if got := w.SB.Talos.EtcdMembers("demo"); !slices.Equal(got, []string{"demo-cp-1", "demo-cp-2"}) {
		t.Errorf("etcd members after demo-cp-3 left = %v, want demo-cp-1 and demo-cp-2 (one removal at a time)", got)
	}
	if rec, ok := inProgress(w.env(t)); !ok || rec.Node != "demo-cp-3" || rec.Phase != phaseEtcd {
		t.Errorf("recorded in progress: %+v, want demo-cp-3 at %s", rec, phaseEtcd)
	}
	if _, err := w.apply(t, context.Background(), collect); err != nil {
		t.Fatal(err)
	}
	want := []string{
		"node/demo-worker-2", "server/demo-worker-2",
		"etcd/demo-cp-3", "node/demo-cp-3", "server/demo-cp-3",
		"etcd/demo-cp-2", "1 etcd members after demo-cp-2 left", "node/demo-cp-2", "server/demo-cp-2",
	}
	if !slices.Equal(order, want) {
		t.Errorf("removal order:\n got %q\nwant %q", order, want)
	}
	if got := w.SB.Talos.EtcdMembers("demo"); !slices.Equal(got, []string{"demo-cp-1"}) {
		t.Errorf("etcd members (sandbox) = %v", got)
	}
	if got := w.SB.Talos.VIPHolders("demo"); !slices.Equal(got, []string{"demo-cp-1"}) {
		t.Errorf("VIP holders = %v, want the staying control plane", got)
	}
	hc := w.client()
	cp1, _, err := hc.Server.GetByName(context.Background(), "demo-cp-1")
	if err != nil || cp1 == nil {
		t.Fatalf("demo-cp-1: %v", err)
	}
	tc := storedSecret(t, w.env(t), secretTalosconfig)
	c, err := talosapi.Connect(context.Background(), tc, cp1.PublicNet.IPv4.IP.String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ms, err := c.EtcdMembers(context.Background())
	if err != nil || len(ms) != 1 || ms[0].Name != "demo-cp-1" {
		t.Errorf("etcd members over the Talos API: %+v, %v", ms, err)
	}
	for _, name := range []string{"demo-cp-2", "demo-cp-3"} {
		if sv, _, _ := hc.Server.GetByName(context.Background(), name); sv != nil {
			t.Errorf("server %s still exists", name)
		}
		waitNoNode(t, w.kubeClient(t), name)
	}
	v, _, err := hc.Volume.GetByName(context.Background(), "demo-worker-2-data")
	if err != nil || v == nil || v.Server != nil {
		t.Errorf("kept volume: %+v, %v", v, err)
	}
	if _, ok := w.env(t).State.Resource(volumeKey("demo-worker-2")); !ok {
		t.Error("the kept volume is no longer recorded: the pool's next server would not reuse it")
	}

	// Scaling up again reuses the kept volume.
	w.Spec.Pools[0].Count = 2
	if _, err := w.apply(t, context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	back, _, err := hc.Server.GetByName(context.Background(), "demo-worker-2")
	if err != nil || back == nil || v == nil || len(back.Volumes) != 1 || back.Volumes[0].ID != v.ID {
		t.Errorf("demo-worker-2 again: %+v (%v), want the kept volume %+v attached", back, err, v)
	}
	deletedServerLeavesKubernetes(t, w, hc)
}

// deletedServerLeavesKubernetes deletes a server behind the product's back,
// as an operator in the console would: its Talos node stops and the cloud
// controller deletes its Kubernetes node, as on Hetzner.
func deletedServerLeavesKubernetes(t *testing.T, w *world, hc *hcloud.Client) {
	t.Helper()
	ctx := context.Background()
	// The cloud controller runs on a control plane: deleting its own
	// server would stop it too (one replica), and nothing would delete the
	// node until its pod was evicted and ran elsewhere, five minutes later.
	cs := w.kubeClient(t)
	name := "demo-worker-1"
	pods, err := cs.CoreV1().Pods("kube-system").List(ctx, metav1.ListOptions{LabelSelector: "app.kubernetes.io/name=hcloud-cloud-controller-manager"})
	if err != nil || len(pods.Items) != 1 {
		t.Fatalf("the cloud controller's pods: %d (%v), want 1", len(pods.Items), err)
	}
	if on := pods.Items[0].Spec.NodeName; !strings.HasPrefix(on, "demo-cp-") {
		t.Fatalf("the cloud controller runs on %q, want a control plane", on)
	}
	sv, _, err := hc.Server.GetByName(ctx, name)
	if err != nil || sv == nil {
		t.Fatalf("%s: %v", name, err)
	}
	if w.SB.Talos.Node(sv.ID) == nil {
		t.Fatalf("%s runs no Talos node before its deletion", name)
	}
	if _, _, err := hc.Server.DeleteWithResult(ctx, sv); err != nil {
		t.Fatal(err)
	}
	if w.SB.Talos.Node(sv.ID) != nil {
		t.Error("the deleted server still runs its Talos node")
	}
	// The CCM deletes only a node that is not Ready: the node lifecycle
	// controller turns it Unknown after kube-controller-manager's
	// --node-monitor-grace-period (50s by default since v1.32).
	waitNoNodeWithin(t, cs, name, 4*time.Minute) // a bound: 50 s of grace, longer on a loaded machine
}

// powerOff stops a server as the console's power button would.
func powerOff(t *testing.T, hc *hcloud.Client, name string) *hcloud.Server {
	t.Helper()
	ctx := context.Background()
	sv, _, err := hc.Server.GetByName(ctx, name)
	if err != nil || sv == nil {
		t.Fatalf("%s: %v", name, err)
	}
	a, _, err := hc.Server.Poweroff(ctx, sv)
	if err == nil {
		err = hc.Action.WaitFor(ctx, a)
	}
	if err != nil {
		t.Fatal(err)
	}
	return sv
}

// TestScaleDownKeepsQuorum: a pool removed from the spec goes entirely;
// with another control plane down, no member is removed (the error names
// the one down and the fix); a control plane that is down itself is
// removed by a staying member.
func TestScaleDownKeepsQuorum(t *testing.T) {
	t.Parallel()
	w := newWorld(t, "../examples/seed.yaml")
	w.Spec.Pools = append(w.Spec.Pools, spec.Pool{Name: "extra", ServerType: "cpx32", Count: 2, Subnet: "10.0.3.0/24"})
	w.Spec.Default()
	if _, err := w.apply(t, context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	hc := w.client()
	cp2 := powerOff(t, hc, "demo-cp-2")
	w.Spec.ControlPlane.Count = 1
	w.Spec.Pools = w.Spec.Pools[:1]
	for _, name := range []string{"demo-extra-1", "demo-extra-2"} {
		if it := w.planOf(t, StepScaleDown, "server", name); it.Action != engine.ActionDelete {
			t.Errorf("plan for %s of the removed pool = %+v, want delete", name, it)
		}
	}
	err := w.runScaleDown(t, context.Background(), time.Minute, nil)
	if err == nil || !strings.Contains(err.Error(), "demo-cp-2 do not answer") || !strings.Contains(err.Error(), "quorum") || !strings.Contains(err.Error(), "Fix:") {
		t.Fatalf("removing demo-cp-3 while demo-cp-2 is down: %v", err)
	}
	if got := w.SB.Talos.EtcdMembers("demo"); len(got) != 3 {
		t.Fatalf("etcd members = %v, want all 3 kept", got)
	}
	if sv, _, _ := hc.Server.GetByName(context.Background(), "demo-cp-3"); sv == nil {
		t.Fatal("demo-cp-3 deleted although etcd would have lost its quorum")
	}
	for _, name := range []string{"demo-extra-1", "demo-extra-2"} {
		if sv, _, _ := hc.Server.GetByName(context.Background(), name); sv != nil {
			t.Errorf("server %s of the removed pool still exists", name)
		}
		waitNoNode(t, w.kubeClient(t), name)
	}

	// demo-cp-2 comes back; demo-cp-3 goes down instead.
	a, _, err := hc.Server.Poweron(context.Background(), cp2)
	if err == nil {
		err = hc.Action.WaitFor(context.Background(), a)
	}
	if err != nil {
		t.Fatal(err)
	}
	powerOff(t, hc, "demo-cp-3")
	var evs []engine.Event
	if err := w.runScaleDown(t, context.Background(), time.Minute, func(ev engine.Event) { evs = append(evs, ev) }); err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(evs, func(ev engine.Event) bool {
		return ev.Resource == "etcd/demo-cp-3" && strings.Contains(ev.Message, "EtcdRemoveMemberByID")
	}) {
		t.Error("the stopped demo-cp-3 was not removed by a staying member")
	}
	if got := w.SB.Talos.EtcdMembers("demo"); !slices.Equal(got, []string{"demo-cp-1"}) {
		t.Errorf("etcd members = %v, want demo-cp-1", got)
	}
}

// moveVIPAway power-cycles demo-cp-1 so that the VIP moves to another
// control plane (the next etcd member in line) and stays there.
func moveVIPAway(t *testing.T, w *world) {
	t.Helper()
	hc := w.client()
	cp1 := powerOff(t, hc, "demo-cp-1")
	holder := waitVIPHolder(t, w, func(h string) bool { return h != "demo-cp-1" })
	a, _, err := hc.Server.Poweron(context.Background(), cp1)
	if err == nil {
		err = hc.Action.WaitFor(context.Background(), a)
	}
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, "demo-cp-1 to come back", func() (bool, string) {
		n := w.SB.Talos.Node(cp1.ID)
		return n != nil && n.KubernetesEndpoint() != "", ""
	})
	waitVIPHolder(t, w, func(h string) bool { return h == holder })
}

// waitVIPHolder waits until exactly one control plane holds the VIP and
// ok accepts it; it returns the holder.
func waitVIPHolder(t *testing.T, w *world, ok func(string) bool) string {
	t.Helper()
	var holder string
	waitFor(t, "one VIP holder", func() (bool, string) {
		hs := w.SB.Talos.VIPHolders("demo")
		if len(hs) == 1 && ok(hs[0]) {
			holder = hs[0]
			return true, ""
		}
		return false, fmt.Sprintf("VIP holders = %v", hs)
	})
	return holder
}
