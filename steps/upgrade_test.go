package steps

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/siderolabs/talos/pkg/machinery/client"
	clientconfig "github.com/siderolabs/talos/pkg/machinery/client/config"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/ohmytalos/ohmytalos/internal/engine"
)

// smallWorld is the seed cluster cut to one control plane and one worker,
// at the given Talos and Kubernetes versions, applied.
func smallWorld(t *testing.T, talosVersion, k8s string) *world {
	t.Helper()
	w := newWorld(t, "../examples/seed.yaml")
	w.Spec.ControlPlane.Count = 1
	w.Spec.Pools = w.Spec.Pools[:1]
	w.Spec.Pools[0].Count = 1
	w.Spec.Talos.Version, w.Spec.Kubernetes.Version = talosVersion, k8s
	if _, err := w.apply(t, context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	return w
}

// talosVersions asks every server's Talos API for its version with the
// machinery client, keyed by server name, with the server IDs.
func talosVersions(t *testing.T, w *world) (map[string]string, map[string]int64) {
	t.Helper()
	tc := storedSecret(t, w.env(t), secretTalosconfig)
	cfg, err := clientconfig.FromBytes(tc)
	if err != nil {
		t.Fatal(err)
	}
	versions, ids := map[string]string{}, map[string]int64{}
	for _, sv := range w.SB.HCloud.Servers() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		c, err := client.New(ctx, client.WithConfig(cfg), client.WithEndpoints(sv.PublicIPv4))
		if err != nil {
			t.Fatal(err)
		}
		resp, err := c.Version(ctx)
		cancel()
		_ = c.Close()
		if err != nil {
			t.Fatalf("version of %s: %v", sv.Name, err)
		}
		versions[sv.Name], ids[sv.Name] = resp.GetMessages()[0].GetVersion().GetTag(), sv.ID
	}
	return versions, ids
}

// drainEvent tells the drain's cordon, drained and uncordon events from
// the upgrades themselves.
func drainEvent(msg string) bool {
	return strings.HasPrefix(msg, "cordoned") || msg == "drained" || strings.HasPrefix(msg, "uncordoned")
}

func upgradeEvents(evs []engine.Event) []string {
	var out []string
	for _, ev := range evs {
		if ev.Step == StepUpgrade && ev.Kind == engine.KindResource && ev.Action == engine.ActionUpdate && !drainEvent(ev.Message) {
			out = append(out, ev.Resource)
		}
	}
	return out
}

func TestTalosUpgradeInPlace(t *testing.T) {
	t.Parallel()
	w := smallWorld(t, "v1.13.0", "1.36.3")
	before, ids := talosVersions(t, w)
	for name, v := range before {
		if v != "v1.13.0" {
			t.Fatalf("%s runs %s before the upgrade", name, v)
		}
	}

	w.Spec.Talos.Version = "v1.13.9"
	// apply refuses without --yes on this diff (cmd/ohmytalos runApply).
	if diff := strings.Join(engine.SpecChange(w.env(t)), "\n"); !strings.Contains(diff, "v1.13.0") || !strings.Contains(diff, "v1.13.9") {
		t.Errorf("spec change not shown: %q", diff)
	}
	it := w.planOf(t, StepUpgrade, "node", "demo-cp-1")
	if it.Action != engine.ActionUpdate || len(it.Changes) != 1 || it.Changes[0].Field != "talos" ||
		!strings.HasPrefix(it.Changes[0].Old, "v1.13.0 / schematic ") || !strings.HasPrefix(it.Changes[0].New, "v1.13.9 / schematic ") {
		t.Fatalf("plan for demo-cp-1 = %+v", it)
	}
	for _, p := range mustPlan(t, w) {
		if p.Step == StepServers && p.Count(engine.ActionReplace) != 0 {
			t.Fatalf("servers plan replaces a server for a new image: %+v", p.Items)
		}
	}

	var evs []engine.Event
	if _, err := w.apply(t, context.Background(), func(ev engine.Event) { evs = append(evs, ev) }); err != nil {
		t.Fatal(err)
	}
	if got := upgradeEvents(evs); strings.Join(got, ",") != "node/demo-cp-1,node/demo-worker-1" {
		t.Fatalf("upgrade order = %v, want the control plane first", got)
	}
	// Each Ready node was drained before its reboot and is schedulable again.
	for _, node := range []string{"demo-cp-1", "demo-worker-1"} {
		var cordoned, uncordoned bool
		for _, ev := range evs {
			if ev.Step == StepUpgrade && ev.Resource == "node/"+node {
				cordoned = cordoned || strings.HasPrefix(ev.Message, "cordoned")
				uncordoned = uncordoned || ev.Message == "uncordoned after its upgrade"
			}
		}
		if !cordoned || !uncordoned {
			t.Errorf("%s: cordoned %v, uncordoned %v during its upgrade", node, cordoned, uncordoned)
		}
	}
	for name, unsched := range nodeSpecs(t, w, func(s corev1.NodeSpec) bool { return s.Unschedulable }) {
		if unsched {
			t.Errorf("%s is still cordoned after its upgrade", name)
		}
	}
	after, idsAfter := talosVersions(t, w)
	for name, v := range after {
		if v != "v1.13.9" || idsAfter[name] != ids[name] {
			t.Errorf("%s: %s on server %d after the upgrade, want v1.13.9 on server %d", name, v, idsAfter[name], ids[name])
		}
	}
	if len(after) != len(before) {
		t.Errorf("servers after = %v, before = %v", after, before)
	}
	for _, sv := range w.SB.HCloud.Servers() {
		if n := w.SB.Talos.Node(sv.ID); n == nil || n.SchematicID() == "" {
			t.Errorf("%s: no schematic after the upgrade", sv.Name)
		}
	}

	for name, img := range nodeInfo(t, w, func(n corev1.NodeSystemInfo) string { return n.OSImage }) {
		if img != "Talos (v1.13.9)" {
			t.Errorf("%s: Kubernetes reports OS %q, want Talos (v1.13.9)", name, img)
		}
	}

	// A rerun (forced) finds every node at the target and does nothing.
	if got := upgradeEvents(w.runOnly(t, StepUpgrade)); len(got) != 0 {
		t.Errorf("rerun upgraded %v again", got)
	}
	if it := w.planOf(t, StepUpgrade, "node", "demo-worker-1"); it.Action != engine.ActionReuse {
		t.Errorf("plan after the upgrade = %+v", it)
	}

	// A server created after the upgrade boots the new snapshot.
	w.Spec.Pools[0].Count = 2
	if _, err := w.apply(t, context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	if got, _ := talosVersions(t, w); got["demo-worker-2"] != "v1.13.9" {
		t.Errorf("new worker runs %q, want v1.13.9", got["demo-worker-2"])
	}
}

// TestUpgradeResumesAfterKill stops apply once the first control plane is
// upgraded; the next apply upgrades the rest, never that one again, with
// three control planes in etcd and two workers in one batch.
func TestUpgradeResumesAfterKill(t *testing.T) {
	t.Parallel()
	w := newWorld(t, "../examples/seed.yaml")
	w.Spec.Talos.Version = "v1.13.0"
	w.Spec.Upgrade.WorkerBatch = 2
	if _, err := w.apply(t, context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	w.Spec.Talos.Version = "v1.13.9"
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var first []engine.Event
	_, err := w.apply(t, ctx, func(ev engine.Event) {
		first = append(first, ev)
		if len(upgradeEvents(first)) == 1 {
			cancel()
		}
	})
	if err == nil {
		t.Fatal("apply finished despite the kill")
	}
	if got := upgradeEvents(first); len(got) != 1 || got[0] != "node/demo-cp-1" {
		t.Fatalf("before the kill: %v", got)
	}
	var evs []engine.Event
	if _, err := w.apply(t, context.Background(), func(ev engine.Event) { evs = append(evs, ev) }); err != nil {
		t.Fatal(err)
	}
	got := strings.Join(upgradeEvents(evs), ",")
	if !strings.HasPrefix(got, "node/demo-cp-2,node/demo-cp-3,") || strings.Contains(got, "demo-cp-1") || len(upgradeEvents(evs)) != 4 {
		t.Errorf("resumed upgrade = %s", got)
	}
	versions, _ := talosVersions(t, w)
	for name, v := range versions {
		if v != "v1.13.9" {
			t.Errorf("%s runs %s", name, v)
		}
	}
}

// TestSchematicChangeUpgradesItsNodes adds an extension to the worker
// schematic: the worker is upgraded to the new schematic at the same
// release; the control plane is left alone.
func TestSchematicChangeUpgradesItsNodes(t *testing.T) {
	t.Parallel()
	w := smallWorld(t, "v1.13.9", "1.36.3")
	_, ids := talosVersions(t, w)
	old := w.SB.Talos.Node(ids["demo-worker-1"]).SchematicID()
	w.Spec.Schematics.Worker.Extensions = append(w.Spec.Schematics.Worker.Extensions, "siderolabs/qemu-guest-agent")
	var evs []engine.Event
	if _, err := w.apply(t, context.Background(), func(ev engine.Event) { evs = append(evs, ev) }); err != nil {
		t.Fatal(err)
	}
	if got := upgradeEvents(evs); len(got) != 1 || got[0] != "node/demo-worker-1" {
		t.Fatalf("upgraded %v, want the worker only", got)
	}
	want, err := targets(w.Spec)
	if err != nil {
		t.Fatal(err)
	}
	if got := w.SB.Talos.Node(ids["demo-worker-1"]).SchematicID(); got == old || got != want["demo-worker-1"].Schematic {
		t.Errorf("worker schematic %s, want %s (was %s)", got, want["demo-worker-1"].Schematic, old)
	}
}

func mustPlan(t *testing.T, w *world) []engine.Plan {
	t.Helper()
	plans, err := engine.New(All(w.deps())...).Plan(context.Background(), w.env(t))
	if err != nil {
		t.Fatal(err)
	}
	return plans
}

func TestTalosUpgradeStopsAtFailingNodeAndResumes(t *testing.T) {
	t.Parallel()
	w := smallWorld(t, "v1.13.0", "1.36.3")
	_, ids := talosVersions(t, w)
	w.SB.Talos.FailUpgrade(ids["demo-cp-1"])
	w.Spec.Talos.Version = "v1.13.9"

	_, err := w.apply(t, context.Background(), nil)
	if err == nil || !strings.Contains(err.Error(), "demo-cp-1") || !strings.Contains(err.Error(), "run apply again") {
		t.Fatalf("apply with a failing control plane: %v", err)
	}
	got, _ := talosVersions(t, w)
	if got["demo-cp-1"] != "v1.13.0" || got["demo-worker-1"] != "v1.13.0" {
		t.Fatalf("after the failure: %v; want both untouched (control planes go first)", got)
	}
	if it := w.planOf(t, StepUpgrade, "node", "demo-cp-1"); !strings.Contains(it.Detail, "interrupted during talos v1.13.9") {
		t.Errorf("plan after the failure = %+v", it)
	}

	w.SB.Talos.AllowUpgrade(ids["demo-cp-1"])
	var evs []engine.Event
	if _, err := w.apply(t, context.Background(), func(ev engine.Event) { evs = append(evs, ev) }); err != nil {
		t.Fatal(err)
	}
	got, _ = talosVersions(t, w)
	if got["demo-cp-1"] != "v1.13.9" || got["demo-worker-1"] != "v1.13.9" {
		t.Fatalf("after the retry: %v", got)
	}
	if u := upgradeEvents(evs); len(u) != 2 {
		t.Errorf("retry upgraded %v", u)
	}
}

// kubeletVersions reads every node's kubelet version with client-go.
func kubeletVersions(t *testing.T, w *world) map[string]string {
	t.Helper()
	return nodeInfo(t, w, func(n corev1.NodeSystemInfo) string { return n.KubeletVersion })
}

// nodeInfo reads a field of every node's system info with client-go.
func nodeInfo(t *testing.T, w *world, field func(corev1.NodeSystemInfo) string) map[string]string {
	t.Helper()
	return nodeField(t, w, func(n corev1.Node) string { return field(n.Status.NodeInfo) })
}

func nodeSpecs(t *testing.T, w *world, field func(corev1.NodeSpec) bool) map[string]bool {
	t.Helper()
	return nodeField(t, w, func(n corev1.Node) bool { return field(n.Spec) })
}

// nodeField reads one field of every node through client-go.
func nodeField[T any](t *testing.T, w *world, field func(corev1.Node) T) map[string]T {
	t.Helper()
	nodes, err := w.kubeClient(t).CoreV1().Nodes().List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]T{}
	for _, n := range nodes.Items {
		out[n.Name] = field(n)
	}
	return out
}

func TestKubernetesUpgradeMovesEveryKubelet(t *testing.T) {
	t.Parallel()
	w := smallWorld(t, "v1.13.9", "1.35.2")
	before := kubeletVersions(t, w)
	if len(before) != 2 || before["demo-cp-1"] != "v1.35.2" || before["demo-worker-1"] != "v1.35.2" {
		t.Fatalf("kubelets before = %v", before)
	}
	w.Spec.Kubernetes.Version = "1.36.3"
	it := w.planOf(t, StepUpgrade, "node", "demo-cp-1")
	if it.Action != engine.ActionUpdate || len(it.Changes) != 2 {
		t.Fatalf("plan = %+v", it)
	}
	var evs []engine.Event
	if _, err := w.apply(t, context.Background(), func(ev engine.Event) { evs = append(evs, ev) }); err != nil {
		t.Fatal(err)
	}
	for name, v := range kubeletVersions(t, w) {
		if v != "v1.36.3" {
			t.Errorf("%s: kubelet %s, want v1.36.3", name, v)
		}
	}
	// Control-plane components first, then kubelets.
	if got := strings.Join(upgradeEvents(evs), ","); got != "node/demo-cp-1,node/demo-cp-1,node/demo-worker-1" {
		t.Errorf("upgrade events = %s", got)
	}
	if got := upgradeEvents(w.runOnly(t, StepUpgrade)); len(got) != 0 {
		t.Errorf("rerun upgraded %v again", got)
	}

	// Talos v1.13 runs Kubernetes up to 1.36: 1.37 is refused before any node.
	w.Spec.Kubernetes.Version = "1.37.0"
	_, err := w.apply(t, context.Background(), nil)
	if err == nil || !strings.Contains(err.Error(), "kubernetes.version: Kubernetes 1.37.0 does not run on Talos v1.13.9") {
		t.Fatalf("unsupported Kubernetes: %v", err)
	}
	// Nor does Talos move when the Kubernetes target is out of its range.
	w.Spec.Talos.Version = "v1.13.0"
	if _, err := w.apply(t, context.Background(), nil); err == nil || !strings.Contains(err.Error(), "does not run on Talos v1.13.0") {
		t.Fatalf("unsupported Kubernetes with a Talos change: %v", err)
	}
	if got, _ := talosVersions(t, w); got["demo-cp-1"] != "v1.13.9" {
		t.Errorf("Talos moved to %s although Kubernetes 1.37 was refused", got["demo-cp-1"])
	}
	for name, v := range kubeletVersions(t, w) {
		if v != "v1.36.3" {
			t.Errorf("%s: kubelet %s after a refused upgrade", name, v)
		}
	}
}

// pathCase is an upgrade from one version to another and the error text
// it must give ("" for none).
type pathCase struct{ from, to, want string }

// checkPaths checks every case's upgrade with check.
func checkPaths(t *testing.T, check func(from, to string) error, cases []pathCase) {
	t.Helper()
	for _, tc := range cases {
		err := check(tc.from, tc.to)
		if (tc.want == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), tc.want)) {
			t.Errorf("%s -> %s: %v, want %q", tc.from, tc.to, err, tc.want)
		}
	}
}

func TestCheckTalosPath(t *testing.T) {
	checkPaths(t, checkTalosPath, []pathCase{
		{"v1.13.0", "v1.13.9", ""},
		{"v1.13.9", "v1.13.0", ""},
		{"v1.12.6", "v1.13.9", ""},
		{"v1.13.9", "v1.12.6", ""},
		{"", "v1.13.9", ""},
		{"v1.12.6", "v1.14.0", "cannot upgrade from v1.12.6 to v1.14.0 in one step: Talos moves one minor release at a time; set talos.version to the latest patch of v1.13.x"},
		{"v1.10.3", "v1.13.9", "latest patch of v1.11.x, then v1.12.x and apply"},
		{"v1.14.1", "v1.12.0", "cannot downgrade from v1.14.1 to v1.12.0"},
		{"v1.13.9", "v2.0.0", "changes the major release"},
		{"v1.13.9", "v1.x", "not a Talos release version"},
		{"v1.x", "v1.13.9", "the node runs Talos \"v1.x\", which is no release version"},
	})
}

func TestKubernetesSupported(t *testing.T) {
	for _, tc := range []struct {
		k8s, talos string
		ok         bool
	}{
		{"1.36.3", "v1.13.9", true},
		{"1.31.0", "v1.13.0", true},
		{"1.37.0", "v1.13.9", false},
		{"1.30.5", "v1.13.9", false},
	} {
		err := kubernetesSupported(tc.k8s, tc.talos)
		if (err == nil) != tc.ok || (err != nil && !strings.Contains(err.Error(), "kubernetes.version")) {
			t.Errorf("%s on %s: %v", tc.k8s, tc.talos, err)
		}
	}
}

func TestCheckKubernetesPath(t *testing.T) {
	checkPaths(t, checkKubernetesPath, []pathCase{
		{"v1.35.2", "v1.36.3", ""},
		{"v1.36.0", "v1.36.3", ""},
		{"", "v1.36.3", ""},
		{"v1.36.3", "v1.36.0", "is a downgrade"},
		{"v1.36.3", "v1.35.0", "is a downgrade"},
		{"v1.34.1", "v1.36.3", "latest patch of 1.35.x and apply"},
		{"v1.33.1", "v1.36.3", "1.34.x, then 1.35.x"},
		{"v1.36.3", "1.x", "not a Kubernetes release version"},
		{"1.x", "v1.36.3", "the cluster runs Kubernetes \"1.x\", which is no release version"},
	})
}

// A removed node leaves no upgrade history behind for a server added later
// under its name.
func TestForgetUpgradeRecord(t *testing.T) {
	t.Parallel()
	w := newWorld(t, "../examples/seed.yaml")
	env := w.env(t)
	if err := forgetUpgradeRecord(env, "demo-worker-2"); err != nil {
		t.Fatalf("no record yet: %v", err)
	}
	rec := upgradeData{Nodes: map[string]nodeVersions{
		"demo-worker-1": {Talos: "v1.13.9"},
		"demo-worker-2": {Talos: "v1.13.0", Pending: "talos v1.13.9"},
	}}
	if err := env.State.PutData(dataUpgrade, rec); err != nil {
		t.Fatal(err)
	}
	if err := forgetUpgradeRecord(env, "demo-worker-2"); err != nil {
		t.Fatal(err)
	}
	var got upgradeData
	if _, err := env.State.GetData(dataUpgrade, &got); err != nil {
		t.Fatal(err)
	}
	if _, ok := got.Nodes["demo-worker-2"]; ok || got.Nodes["demo-worker-1"].Talos != "v1.13.9" {
		t.Errorf("record after forgetting demo-worker-2 = %+v", got.Nodes)
	}
}
