//go:build unix

package steps

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/ohmytalos/ohmytalos/internal/addons"
	"github.com/ohmytalos/ohmytalos/internal/charts"
	"github.com/ohmytalos/ohmytalos/internal/engine"
	"github.com/ohmytalos/ohmytalos/internal/releases"
	"github.com/ohmytalos/ohmytalos/internal/sandbox"
	"github.com/ohmytalos/ohmytalos/internal/sandbox/kubereal/kubetest"
	"github.com/ohmytalos/ohmytalos/internal/spec"
	"github.com/ohmytalos/ohmytalos/internal/testworld"
)

// seedWorld is the seed spec (with edit applied) in a fresh sandbox on
// the real control plane.
func seedWorld(t *testing.T, edit func(*spec.Spec)) *world {
	t.Helper()
	needGo(t)
	sp, err := spec.Load("../examples/seed.yaml")
	if err != nil {
		t.Fatal(err)
	}
	edit(sp)
	sb, err := sandbox.Start(context.Background(), sandbox.Options{Progress: func(s string) { t.Log(s) }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sb.Close() })
	return &world{&testworld.World{SB: sb, Dir: t.TempDir(), Spec: sp, KeyFile: testworld.NewKeyFile(t)}}
}

// needGo skips a test on the real control plane where there is no go
// command to build it with.
func needGo(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("the real Kubernetes control plane is built from source: no go command on PATH")
	}
}

// applyLogged applies, failing the test on error, and returns the events.
func (w *world) applyLogged(t *testing.T) []engine.Event {
	t.Helper()
	var evs []engine.Event
	if _, err := w.apply(t, context.Background(), func(ev engine.Event) { evs = append(evs, ev) }); err != nil {
		t.Fatal(err)
	}
	return evs
}

// applyChangesNothing applies again and fails the test for every event
// but a skipped step's.
func (w *world) applyChangesNothing(t *testing.T) {
	t.Helper()
	for _, ev := range w.applyLogged(t) {
		if ev.Kind != engine.KindSkipped {
			t.Errorf("second apply did something: %+v", ev)
		}
	}
}

// releases is a Helm releases client for the world's cluster.
func (w *world) releases(t *testing.T) *releases.Client {
	t.Helper()
	rc, err := w.deps().Releases(context.Background(), w.env(t))
	if err != nil {
		t.Fatal(err)
	}
	return rc
}

// release reads one release, failing the test on error.
func (w *world) release(t *testing.T, name, ns string) releases.Current {
	t.Helper()
	cur, err := w.releases(t).Get(context.Background(), name, ns)
	if err != nil {
		t.Fatal(err)
	}
	return cur
}

// addonEvents are the events of resource addon/NAME that did something.
func addonEvents(evs []engine.Event, name string) []engine.Event {
	var out []engine.Event
	for _, ev := range evs {
		if ev.Resource == "addon/"+name && ev.Kind != engine.KindSkipped && ev.Kind != engine.KindProgress {
			out = append(out, ev)
		}
	}
	return out
}

func setOn(a *spec.Addon, on bool) { a.Enabled = &on }

// The seed applies its add-ons as Helm releases the stock helm CLI
// lists, with the spec's user value in cilium's values; a second apply
// reuses every release; a handed-over release survives two applies
// untouched; switching metrics-server off uninstalls it.
func TestAddonsHelmReleasesOnRealKubernetes(t *testing.T) {
	t.Parallel()
	w := seedWorld(t, func(sp *spec.Spec) {
		sp.Addons.Cilium.Values = map[string]any{"hubble": map[string]any{"relay": map[string]any{"enabled": true}}}
		setOn(&sp.Addons.MetricsServer, true)
	})
	w.applyLogged(t)

	want := map[string]string{"cilium": "kube-system", "hcloud-cloud-controller-manager": "kube-system", "hcloud-csi": "kube-system", "metrics-server": "kube-system"}
	for name, ns := range want {
		if cur := w.release(t, name, ns); !cur.Found || cur.Status != "deployed" || cur.Revision != 1 {
			t.Errorf("release %s/%s: %+v", ns, name, cur)
		}
	}

	helm, err := kubetest.StockHelm()
	if err != nil {
		t.Fatal(err)
	}
	kc := storedSecret(t, w.env(t), secretKubeconfig)
	var listed []struct{ Name, Namespace, Status string }
	if err := json.Unmarshal(kubetest.Helm(t, helm, kc, "list", "-A", "-o", "json"), &listed); err != nil {
		t.Fatal(err)
	}
	for _, r := range listed {
		if want[r.Name] == r.Namespace && r.Status == "deployed" {
			delete(want, r.Name)
		}
	}
	if len(want) > 0 {
		t.Errorf("helm list -A lacks %v: %+v", want, listed)
	}
	vals := string(kubetest.Helm(t, helm, kc, "get", "values", "cilium", "-n", "kube-system", "-o", "json"))
	if !strings.Contains(vals, `"relay":{"enabled":true}`) || !strings.Contains(vals, `"k8sServicePort":7445`) {
		t.Errorf("helm get values cilium lacks the spec's hubble.relay.enabled or ohmytalos's KubePrism port: %s", vals)
	}
	if strings.Contains(vals, w.SB.Token) {
		t.Error("the token is in cilium's values")
	}

	w.applyChangesNothing(t)

	// Plan reads the releases from the cluster: reuse, then an upgrade
	// naming the changed value and a warning for a required value.
	if it := w.planOf(t, StepAddons, "addon", addons.Cilium); it.Action != engine.ActionReuse || !strings.Contains(it.Detail, "from the cluster") {
		t.Errorf("cilium's plan after apply: %+v", it)
	}
	w.Spec.Addons.Cilium.Values["k8sServicePort"] = 6443
	it := w.planOf(t, StepAddons, "addon", addons.Cilium)
	if it.Action != engine.ActionUpdate || len(it.Changes) != 1 || !strings.Contains(it.Changes[0].New, "k8sServicePort") {
		t.Errorf("cilium's plan with a changed value: %+v", it)
	}
	if notes := strings.Join(w.planStep(t, StepAddons).Notes, "\n"); !strings.Contains(notes, "addons.cilium.values overrides k8sServicePort") {
		t.Errorf("no warning for the overridden required value: %s", notes)
	}
	delete(w.Spec.Addons.Cilium.Values, "k8sServicePort")

	// Handed over: two applies leave the release's record alone.
	off := false
	w.Spec.Addons.MetricsServer.Managed = &off
	w.Spec.Addons.MetricsServer.Values = map[string]any{"replicas": 3}
	for range 2 {
		if evs := addonEvents(w.applyLogged(t), addons.MetricsServer); len(evs) > 0 {
			t.Errorf("a handed-over release was touched: %+v", evs)
		}
	}
	if cur := w.release(t, "metrics-server", "kube-system"); cur.Revision != 1 || !cur.Found {
		t.Errorf("handed-over metrics-server: %+v, want revision 1 untouched", cur)
	}

	// Switched off (and managed again): uninstalled.
	w.Spec.Addons.MetricsServer.Managed = nil
	setOn(&w.Spec.Addons.MetricsServer, false)
	w.applyLogged(t)
	if cur := w.release(t, "metrics-server", "kube-system"); cur.Found {
		t.Errorf("metrics-server switched off is still installed: %+v", cur)
	}
	if _, err := w.kubeClient(t).AppsV1().Deployments("kube-system").Get(context.Background(), "metrics-server", metav1.GetOptions{}); err == nil {
		t.Error("metrics-server's Deployment survived the uninstall")
	}
}

// A cluster whose add-ons an earlier ohmytalos applied as typed objects
// converges to releases in place: the cilium DaemonSet keeps its UID.
// An addons.extra chart (a local chart directory) is installed after the
// built-in ones, with its values.
func TestAddonsMigrateTypedObjectsToReleases(t *testing.T) {
	t.Parallel()
	chartDir := t.TempDir()
	for name, body := range map[string]string{
		"Chart.yaml":               "apiVersion: v2\nname: notes\nversion: 0.1.0\n",
		"values.yaml":              "greeting: hello\n",
		"templates/configmap.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Release.Name }}-notes\ndata:\n  greeting: {{ .Values.greeting | quote }}\n",
	} {
		os.MkdirAll(filepath.Dir(filepath.Join(chartDir, name)), 0o755)
		if err := os.WriteFile(filepath.Join(chartDir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	w := seedWorld(t, func(sp *spec.Spec) {
		for _, a := range []*spec.Addon{&sp.Addons.Cilium, &sp.Addons.HCloudCCM, &sp.Addons.HCloudCSI, &sp.Addons.Longhorn, &sp.Addons.MetricsServer, &sp.Addons.Ingress} {
			setOn(a, false)
		}
		sp.Addons.Extra = []spec.ExtraChart{{Name: "notes", Namespace: "extras", Chart: charts.Ref{Path: chartDir}, Values: map[string]any{"greeting": "hi"}}}
	})
	w.applyLogged(t)

	// The typed path, as an earlier ohmytalos applied it: cilium's objects.
	typed := *w.Spec
	typed.Addons.Cilium.Enabled = nil
	setOn(&typed.Addons.Cilium, true)
	rendered, err := addons.Render(&typed, addons.Inputs{})
	if err != nil {
		t.Fatal(err)
	}
	c, err := w.deps().Kube(context.Background(), w.env(t))
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range rendered {
		if a.Name != addons.Cilium {
			continue
		}
		for _, o := range a.Objects {
			if o.Kind() == addons.CiliumClusterwidePolicyKind {
				continue // its kind comes with the running operator
			}
			if _, err := c.Apply(context.Background(), o); err != nil {
				t.Fatalf("typed apply %s: %v", o.Ref(), err)
			}
		}
	}
	ds, err := w.kubeClient(t).AppsV1().DaemonSets("kube-system").Get(context.Background(), "cilium", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}

	setOn(&w.Spec.Addons.Cilium, true)
	evs := w.applyLogged(t)
	if !hasEvent(evs, engine.KindResource, "adopt", "addon/cilium") {
		t.Errorf("no adopt event for cilium: %+v", addonEvents(evs, addons.Cilium))
	}
	after, err := w.kubeClient(t).AppsV1().DaemonSets("kube-system").Get(context.Background(), "cilium", metav1.GetOptions{})
	if err != nil {
		t.Fatalf("the cilium DaemonSet is gone after the migration: %v", err)
	}
	if after.UID != ds.UID {
		t.Errorf("the cilium DaemonSet was recreated: UID %s -> %s", ds.UID, after.UID)
	}
	if after.Annotations["meta.helm.sh/release-name"] != "cilium" || after.Labels["app.kubernetes.io/managed-by"] != "Helm" {
		t.Errorf("the cilium DaemonSet is not the release's: %v %v", after.Labels, after.Annotations)
	}
	if cur := w.release(t, "cilium", "kube-system"); !cur.Found || cur.Status != "deployed" {
		t.Errorf("release cilium: %+v", cur)
	}
	cm, err := w.kubeClient(t).CoreV1().ConfigMaps("extras").Get(context.Background(), "notes-notes", metav1.GetOptions{})
	if err != nil || cm.Data["greeting"] != "hi" {
		t.Errorf("the extra chart's ConfigMap: %v, %v", cm, err)
	}
	if cur := w.release(t, "notes", "extras"); !cur.Found || cur.Status != "deployed" {
		t.Errorf("release notes (addons.extra): %+v", cur)
	}

	// Removed from addons.extra: plan says it goes, apply uninstalls it.
	w.Spec.Addons.Extra = nil
	p, err := (&Addons{w.deps()}).Plan(context.Background(), w.env(t))
	if err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(p.Items, func(it engine.PlanItem) bool { return it.Action == engine.ActionDelete && it.Name == "notes" }) {
		t.Errorf("plan has no uninstall of the removed extra: %+v", p.Items)
	}
	if !hasEvent(w.applyLogged(t), engine.KindResource, engine.ActionDelete, "addon/notes") {
		t.Error("no uninstall event for the removed extra")
	}
	if cur := w.release(t, "notes", "extras"); cur.Found {
		t.Errorf("the removed extra is still installed: %+v", cur)
	}
}
