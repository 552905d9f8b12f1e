//go:build unix

package kubereal_test

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"
	"time"

	"helm.sh/helm/v4/pkg/action"
	chart "helm.sh/helm/v4/pkg/chart/v2"
	"helm.sh/helm/v4/pkg/chart/v2/loader"
	"helm.sh/helm/v4/pkg/kube"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/cli-runtime/pkg/genericclioptions"

	"github.com/ohmytalos/ohmytalos/internal/sandbox/chartrepo"
	"github.com/ohmytalos/ohmytalos/internal/sandbox/kubereal"
	"github.com/ohmytalos/ohmytalos/internal/sandbox/kubereal/kubetest"
)

// TestHelmInstallsTheStandInCharts installs every stand-in chart with
// helm's own install action against the real kube-apiserver (OpenAPI
// validation, server-side apply, release Secrets, CRDs), fetched from the
// sandbox's chart repository; the node turns Ready once the cilium
// release's agent runs, and the simulated operator registers Cilium's
// CRDs. It is the package's one test that is not parallel: its node has
// TestKubeletReadyOnceCNIRuns's addresses.
func TestHelmInstallsTheStandInCharts(t *testing.T) {
	ctx, cp, admin := startAdmin(t)
	kubeconfig := writeKubeconfig(t, cp)

	startKubelet(t, ctx, cp, kubereal.KubeletConfig{
		Name: "cp-1", Version: "v1.36.3", InternalIP: "10.0.1.1", ExternalIP: "127.1.2.3",
		Labels: map[string]string{"node-role.kubernetes.io/control-plane": ""},
	})

	op, err := cp.StartCiliumOperator(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer op.Stop()

	repo, err := chartrepo.New()
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(repo)
	defer ts.Close()

	install(t, ctx, kubeconfig, fetchChart(t, ts.URL, repo, "cilium"), "cilium", "kube-system", map[string]any{
		"ipam": map[string]any{"mode": "kubernetes"}, "kubeProxyReplacement": true,
		"k8sServiceHost": "localhost", "k8sServicePort": 7445,
		"cgroup":   map[string]any{"autoMount": map[string]any{"enabled": false}, "hostRoot": "/sys/fs/cgroup"},
		"operator": map[string]any{"replicas": 1},
		"hubble":   map[string]any{"relay": map[string]any{"enabled": true}},
	})

	waitFor(t, 2*time.Minute, "cp-1 turns Ready once the cilium release's agent runs on it", func() (bool, error) {
		st, err := nodeReady(ctx, admin, "cp-1")

		return st == corev1.ConditionTrue, err
	})

	waitFor(t, 2*time.Minute, "the simulated cilium operator registers Cilium's CRDs once the release's operator runs", func() (bool, error) {
		_, err := admin.RESTClient().Get().AbsPath("/apis/apiextensions.k8s.io/v1/customresourcedefinitions/ciliumnodes.cilium.io").DoRaw(ctx)

		return err == nil, nil
	})

	// Longhorn's namespace comes first, with the PodSecurity labels
	// ohmytalos applies (the chart does not create it).
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "longhorn-system", Labels: map[string]string{
		"pod-security.kubernetes.io/enforce": "privileged", "pod-security.kubernetes.io/audit": "privileged", "pod-security.kubernetes.io/warn": "privileged",
	}}}
	if _, err := admin.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	for _, rel := range []struct {
		chart, name, ns string
		vals            map[string]any
	}{
		{"hcloud-cloud-controller-manager", "hcloud-cloud-controller-manager", "kube-system", map[string]any{"networking": map[string]any{"enabled": true, "clusterCIDR": "10.42.0.0/16"}}},
		{"hcloud-csi", "hcloud-csi", "kube-system", map[string]any{"controller": map[string]any{"volumeExtraLabels": map[string]any{"ohmytalos.io/cluster": "real"}}}},
		{"longhorn", "longhorn", "longhorn-system", map[string]any{"defaultSettings": map[string]any{"defaultDataPath": "/var/lib/longhorn"}, "longhornUI": map[string]any{"replicas": 1}}},
		{"traefik", "traefik", "traefik", map[string]any{"service": map[string]any{"annotations": map[string]any{"load-balancer.hetzner.cloud/location": "nbg1"}}}},
		// Last: its APIService has no endpoints here, and discovery
		// reports the group unavailable from then on.
		{"metrics-server", "metrics-server", "kube-system", map[string]any{"args": []any{"--kubelet-insecure-tls"}}},
	} {
		install(t, ctx, kubeconfig, fetchChart(t, ts.URL, repo, rel.chart), rel.name, rel.ns, rel.vals)
	}

	for _, c := range []struct{ ns, secret string }{
		{"kube-system", "sh.helm.release.v1.cilium.v1"}, {"longhorn-system", "sh.helm.release.v1.longhorn.v1"}, {"traefik", "sh.helm.release.v1.traefik.v1"},
	} {
		if _, err := admin.CoreV1().Secrets(c.ns).Get(ctx, c.secret, metav1.GetOptions{}); err != nil {
			t.Errorf("release record %s/%s: %v", c.ns, c.secret, err)
		}
	}

	for _, crd := range []string{"ingressroutes.traefik.io", "volumes.longhorn.io"} {
		if _, err := admin.RESTClient().Get().AbsPath("/apis/apiextensions.k8s.io/v1/customresourcedefinitions/" + crd).DoRaw(ctx); err != nil {
			t.Errorf("CRD %s: %v", crd, err)
		}
	}
}

// fetchChart downloads a stand-in's archive from the repository server
// and checks it is the one the index lists.
func fetchChart(t *testing.T, base string, repo *chartrepo.Server, name string) *chart.Chart {
	t.Helper()

	for _, c := range repo.Charts() {
		if c.Name != name {
			continue
		}

		resp, err := http.Get(base + "/" + c.Repository + "/" + c.File)
		if err != nil {
			t.Fatal(err)
		}

		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()

		if err != nil || resp.StatusCode != http.StatusOK || !bytes.Equal(body, c.Archive) {
			t.Fatalf("GET %s: %d %v", c.File, resp.StatusCode, err)
		}

		ch, err := loader.LoadArchive(bytes.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}

		return ch
	}

	t.Fatalf("no stand-in chart %s", name)

	return nil
}

// install runs helm's install action, as `helm install` does.
func install(t *testing.T, ctx context.Context, kubeconfig string, ch *chart.Chart, name, ns string, vals map[string]any) {
	t.Helper()

	flags := genericclioptions.NewConfigFlags(false)
	flags.KubeConfig, flags.Namespace = &kubeconfig, &ns

	cfg := action.NewConfiguration()
	cfg.SetLogger(slog.DiscardHandler)

	if err := cfg.Init(flags, ns, "secret"); err != nil {
		t.Fatal(err)
	}

	in := action.NewInstall(cfg)
	in.ReleaseName, in.Namespace, in.CreateNamespace = name, ns, true
	in.WaitStrategy, in.Timeout = kube.HookOnlyStrategy, 2*time.Minute

	if _, err := in.RunWithContext(ctx, ch, vals); err != nil {
		t.Fatalf("helm install %s %s -n %s: %v", name, ch.Name(), ns, err)
	}
}

// writeKubeconfig is an admin kubeconfig for the control plane.
func writeKubeconfig(t *testing.T, cp *kubereal.ControlPlane) string {
	t.Helper()

	p := filepath.Join(t.TempDir(), "kubeconfig")
	if err := os.WriteFile(p, kubetest.AdminKubeconfig(t, cp), 0o600); err != nil {
		t.Fatal(err)
	}

	return p
}
