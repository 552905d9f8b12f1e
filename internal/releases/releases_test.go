//go:build unix

package releases

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"helm.sh/helm/v4/pkg/chart/v2/loader"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"

	"github.com/ohmytalos/ohmytalos/internal/charts"
	"github.com/ohmytalos/ohmytalos/internal/sandbox/kubereal/kubetest"
)

const (
	relName = "agent"
	relNS   = "agents"
)

func agentChart(t *testing.T) *charts.Chart {
	t.Helper()

	c, err := loader.LoadDir("testdata/agent")
	if err != nil {
		t.Fatal(err)
	}

	return &charts.Chart{Chart: c}
}

// TestReleasesRealKubernetes drives one release through its life against
// a real kube-apiserver: adoption of a typed DaemonSet, install, list,
// reuse, upgrade, a failed upgrade rolled back, the stock helm CLI's
// view of it, and uninstall keeping the CRD.
func TestReleasesRealKubernetes(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()

	type built struct {
		bin string
		err error
	}

	helmBin := make(chan built, 1)
	go func() {
		bin, err := kubetest.StockHelm()
		helmBin <- built{bin, err}
	}()

	c := startCluster(t, ctx)

	cl, err := New(c.kubeconfig)
	if err != nil {
		t.Fatal(err)
	}

	uid := typedDaemonSet(t, ctx, c)

	values := map[string]any{"greeting": "hello", "relay": map[string]any{"enabled": true}}

	steps := []struct {
		name string
		run  func(t *testing.T)
	}{
		{"adopt", func(t *testing.T) { testAdopt(t, ctx, c, cl, values) }},
		{"install keeps the adopted DaemonSet", func(t *testing.T) { testInstall(t, ctx, c, cl, values, uid) }},
		{"reuse", func(t *testing.T) {
			res := ensure(t, ctx, cl, values, time.Minute)
			if res.Change.Action != ActionReuse || res.Revision != 1 {
				t.Fatalf("unchanged release: %+v, want reuse of revision 1", res)
			}
		}},
		{"upgrade", func(t *testing.T) {
			values["greeting"] = "bonjour"
			testUpgrade(t, ctx, c, cl, values)
		}},
		{"failed upgrade rolls back", func(t *testing.T) { testFailedUpgrade(t, ctx, c, cl, values) }},
		{"stock helm CLI", func(t *testing.T) {
			b := <-helmBin
			if b.err != nil {
				t.Fatal(b.err)
			}

			testStockHelm(t, c, b.bin, values)
		}},
		{"uninstall keeps the CRD", func(t *testing.T) { testUninstall(t, ctx, c, cl) }},
	}

	// Each step builds on the one before: stop at the first failure.
	for _, s := range steps {
		if !t.Run(s.name, s.run) {
			return
		}
	}
}

func ensure(t *testing.T, ctx context.Context, cl *Client, values map[string]any, timeout time.Duration) Result {
	t.Helper()

	res, err := cl.Ensure(ctx, Spec{Name: relName, Namespace: relNS, Chart: agentChart(t), Values: values, Timeout: timeout})
	if err != nil {
		t.Fatal(err)
	}

	return res
}

// typedDaemonSet creates the namespace and the agent DaemonSet as an
// earlier ohmytalos did (typed objects, no helm metadata), and returns
// the DaemonSet's UID.
func typedDaemonSet(t *testing.T, ctx context.Context, c *cluster) string {
	t.Helper()

	// The agent runs on the host network: under Talos' PodSecurity
	// admission (enforce baseline) its namespace carries the privileged
	// labels, as ohmytalos gives longhorn-system.
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: relNS, Labels: map[string]string{
		"pod-security.kubernetes.io/enforce": "privileged", "pod-security.kubernetes.io/audit": "privileged", "pod-security.kubernetes.io/warn": "privileged",
	}}}
	if _, err := c.admin.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	labels := map[string]string{"app": "agent"}
	ds := &appsv1.DaemonSet{
		ObjectMeta: metav1.ObjectMeta{Name: "agent", Namespace: relNS, Labels: map[string]string{"app": "agent", "app.kubernetes.io/managed-by": "ohmytalos"}},
		Spec: appsv1.DaemonSetSpec{
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{
					HostNetwork: true,
					Tolerations: []corev1.Toleration{{Operator: corev1.TolerationOpExists}},
					Containers:  []corev1.Container{{Name: "agent", Image: "registry.example/agent:0.9.0"}},
				},
			},
		},
	}

	got, err := c.admin.AppsV1().DaemonSets(relNS).Create(ctx, ds, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}

	return string(got.UID)
}

func testAdopt(t *testing.T, ctx context.Context, c *cluster, cl *Client, values map[string]any) {
	r, err := charts.Render(agentChart(t), charts.Release{Name: relName, Namespace: relNS}, values, "1.36.3")
	if err != nil {
		t.Fatal(err)
	}

	// The ConfigMap and Deployment do not exist yet: skipped.
	if err := cl.Adopt(ctx, relName, relNS, r.Objects); err != nil {
		t.Fatal(err)
	}

	ds, err := c.admin.AppsV1().DaemonSets(relNS).Get(ctx, "agent", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}

	if ds.Labels["app.kubernetes.io/managed-by"] != "Helm" || ds.Annotations["meta.helm.sh/release-name"] != relName ||
		ds.Annotations["meta.helm.sh/release-namespace"] != relNS {
		t.Fatalf("adopted DaemonSet lacks helm's ownership metadata: labels %v annotations %v", ds.Labels, ds.Annotations)
	}
}

func testInstall(t *testing.T, ctx context.Context, c *cluster, cl *Client, values map[string]any, uid string) {
	res := ensure(t, ctx, cl, values, 2*time.Minute)
	if res.Change.Action != ActionInstall || res.Revision != 1 {
		t.Fatalf("install: %+v", res)
	}

	ds, err := c.admin.AppsV1().DaemonSets(relNS).Get(ctx, "agent", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}

	if string(ds.UID) != uid {
		t.Fatalf("the DaemonSet was recreated: UID %s, was %s", ds.UID, uid)
	}

	if img := ds.Spec.Template.Spec.Containers[0].Image; img != "registry.example/agent:1.0.0" {
		t.Fatalf("the adopted DaemonSet was not updated to the chart's: image %s", img)
	}

	if ds.Status.NumberReady != 1 {
		t.Errorf("install returned before the DaemonSet was ready: %+v", ds.Status)
	}

	ls, err := cl.List(ctx)
	if err != nil {
		t.Fatal(err)
	}

	if len(ls) != 1 || ls[0] != (Listed{Name: relName, Namespace: relNS, Revision: 1, Status: "deployed", Chart: "agent-1.0.0"}) {
		t.Fatalf("list: %+v", ls)
	}
}

func testUpgrade(t *testing.T, ctx context.Context, c *cluster, cl *Client, values map[string]any) {
	res := ensure(t, ctx, cl, values, 2*time.Minute)
	if res.Change.Action != ActionUpgrade || res.Revision != 2 || strings.Join(res.Change.Paths, ",") != "greeting" {
		t.Fatalf("upgrade: %+v", res)
	}

	if g := greeting(t, ctx, c); g != "bonjour" {
		t.Fatalf("ConfigMap greeting %q after the upgrade, want bonjour", g)
	}
}

func testFailedUpgrade(t *testing.T, ctx context.Context, c *cluster, cl *Client, values map[string]any) {
	broken := map[string]any{"greeting": "hola", "relay": values["relay"], "unschedulable": true}

	_, err := cl.Ensure(ctx, Spec{Name: relName, Namespace: relNS, Chart: agentChart(t), Values: broken, Timeout: 15 * time.Second})
	if err == nil {
		t.Fatal("an upgrade whose Deployment never becomes ready succeeded")
	}

	for _, want := range []string{"helm upgrade agent", "rolled back", "helm rollback agent 2 -n agents"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not say %q", err, want)
		}
	}

	cur, err := cl.Get(ctx, relName, relNS)
	if err != nil {
		t.Fatal(err)
	}

	// Revision 3 failed; 4 is the rollback to 2.
	if cur.Revision != 4 || cur.Status != "deployed" || cur.Values["greeting"] != "bonjour" {
		t.Fatalf("after the failed upgrade: %+v, want revision 4 deployed with revision 2's values", cur)
	}

	if g := greeting(t, ctx, c); g != "bonjour" {
		t.Fatalf("ConfigMap greeting %q after the rollback, want bonjour", g)
	}

	d, err := c.admin.AppsV1().Deployments(relNS).Get(ctx, "agent-operator", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}

	if len(d.Spec.Template.Spec.NodeSelector) != 0 {
		t.Fatalf("the Deployment still has the failed revision's node selector %v", d.Spec.Template.Spec.NodeSelector)
	}
}

func testStockHelm(t *testing.T, c *cluster, bin string, values map[string]any) {
	var list []map[string]any
	if err := json.Unmarshal(c.helmCLI(t, bin, "list", "-A", "-o", "json"), &list); err != nil {
		t.Fatal(err)
	}

	if len(list) != 1 || list[0]["name"] != relName || list[0]["namespace"] != relNS || list[0]["chart"] != "agent-1.0.0" ||
		list[0]["status"] != "deployed" || list[0]["revision"] != "4" {
		t.Fatalf("helm list -A: %v", list)
	}

	var vals map[string]any
	if err := json.Unmarshal(c.helmCLI(t, bin, "get", "values", relName, "-n", relNS, "-o", "json"), &vals); err != nil {
		t.Fatal(err)
	}

	if relay, _ := vals["relay"].(map[string]any); relay["enabled"] != true || vals["greeting"] != "bonjour" {
		t.Fatalf("helm get values: %v, want the user's relay.enabled true and greeting bonjour", vals)
	}

	var hist []map[string]any
	if err := json.Unmarshal(c.helmCLI(t, bin, "history", relName, "-n", relNS, "-o", "json"), &hist); err != nil {
		t.Fatal(err)
	}

	var statuses []string
	for _, h := range hist {
		statuses = append(statuses, h["status"].(string))
	}

	if got := strings.Join(statuses, " "); got != "superseded superseded failed deployed" {
		t.Fatalf("helm history: %s", got)
	}

	// What charts.Render makes (talos-config --out) is what the release
	// holds.
	r, err := charts.Render(agentChart(t), charts.Release{Name: relName, Namespace: relNS}, values, "1.36.3")
	if err != nil {
		t.Fatal(err)
	}

	if got := string(c.helmCLI(t, bin, "get", "manifest", relName, "-n", relNS)); strings.TrimSpace(got) != strings.TrimSpace(r.Manifest) {
		t.Fatalf("helm get manifest:\n%s\ncharts.Render:\n%s", got, r.Manifest)
	}
}

func testUninstall(t *testing.T, ctx context.Context, c *cluster, cl *Client) {
	if err := cl.Uninstall(ctx, relName, relNS); err != nil {
		t.Fatal(err)
	}

	if cur, err := cl.Get(ctx, relName, relNS); err != nil || cur.Found {
		t.Fatalf("release after uninstall: %+v %v", cur, err)
	}

	if _, err := c.admin.AppsV1().DaemonSets(relNS).Get(ctx, "agent", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Fatalf("DaemonSet after uninstall: %v, want NotFound", err)
	}

	dyn, err := dynamic.NewForConfig(restConfigOf(t, c))
	if err != nil {
		t.Fatal(err)
	}

	crds := schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}
	if _, err := dyn.Resource(crds).Get(ctx, "gadgets.agent.example", metav1.GetOptions{}); err != nil {
		t.Fatalf("the chart's CRD did not survive the uninstall: %v", err)
	}

	// Uninstalling again is no error.
	if err := cl.Uninstall(ctx, relName, relNS); err != nil {
		t.Fatal(err)
	}
}

func greeting(t *testing.T, ctx context.Context, c *cluster) string {
	t.Helper()

	cm, err := c.admin.CoreV1().ConfigMaps(relNS).Get(ctx, "agent-config", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}

	return cm.Data["greeting"]
}

func restConfigOf(t *testing.T, c *cluster) *rest.Config {
	t.Helper()

	rc, err := clientcmdRESTConfig(c.kubeconfig)
	if err != nil {
		t.Fatal(err)
	}

	return rc
}
