package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"helm.sh/helm/v4/pkg/chart/common"
	"helm.sh/helm/v4/pkg/chart/v2/loader"
	chartutil "helm.sh/helm/v4/pkg/chart/v2/util"
	repo "helm.sh/helm/v4/pkg/repo/v1"
	"sigs.k8s.io/yaml"

	"github.com/ohmytalos/ohmytalos/internal/addons"
	"github.com/ohmytalos/ohmytalos/internal/cloud"
	"github.com/ohmytalos/ohmytalos/internal/sandbox"
	"github.com/ohmytalos/ohmytalos/internal/sandbox/chartrepo"
	"github.com/ohmytalos/ohmytalos/internal/spec"
)

// runSplit is run with stdout and stderr apart.
func runSplit(t *testing.T, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	root := newRootCmd()
	var out, errb bytes.Buffer
	root.SetOut(&out)
	root.SetErr(&errb)
	root.SetIn(strings.NewReader(""))
	root.SetArgs(args)
	err = root.ExecuteContext(context.Background())
	return out.String(), errb.String(), err
}

// unmarkedHetzner puts a proxy in front of the sandbox's Hetzner API that
// drops the sandbox's marker header (cloud.SandboxHeader), so a run
// through it is not a sandbox run, and points HCLOUD_ENDPOINT at it. It
// refuses every request that would change something (and counts them):
// a run that gets past the charts stops at its first create instead of
// building a cluster.
func unmarkedHetzner(t *testing.T, sb *sandbox.Sandbox) (writes func() []string) {
	t.Helper()
	target, err := url.Parse(sb.HCloudURL)
	if err != nil {
		t.Fatal(err)
	}
	rp := httputil.NewSingleHostReverseProxy(&url.URL{Scheme: target.Scheme, Host: target.Host})
	rp.ModifyResponse = func(r *http.Response) error {
		r.Header.Del(cloud.SandboxHeader)
		return nil
	}
	var mu sync.Mutex
	var changes []string
	proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			mu.Lock()
			changes = append(changes, r.Method+" "+r.URL.Path)
			mu.Unlock()
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusForbidden)
			fmt.Fprint(w, `{"error":{"code":"forbidden","message":"the test's proxy refuses every change"}}`)
			return
		}
		rp.ServeHTTP(w, r)
	}))
	t.Cleanup(proxy.Close)
	t.Setenv("HCLOUD_ENDPOINT", proxy.URL+target.Path)
	return func() []string {
		mu.Lock()
		defer mu.Unlock()
		return append([]string(nil), changes...)
	}
}

// tamperedMirror is a chart mirror on this machine serving the sandbox's
// stand-ins, but at helm.cilium.io a cilium chart that also carries a
// ConfigMap, listed in the mirror's own index with its own digest (as an
// attacker's mirror would list it). It returns the mirror's URL and that
// archive's digest.
func tamperedMirror(t *testing.T) (mirror, digest string) {
	t.Helper()
	standIns, err := chartrepo.New()
	if err != nil {
		t.Fatal(err)
	}
	var cilium chartrepo.Chart
	for _, c := range standIns.Charts() {
		if c.Name == "cilium" {
			cilium = c
		}
	}
	c, err := loader.LoadArchive(bytes.NewReader(cilium.Archive))
	if err != nil {
		t.Fatal(err)
	}
	c.Templates = append(c.Templates, &common.File{Name: "templates/planted.yaml",
		Data: []byte("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: planted, namespace: kube-system}\ndata: {by: the-mirror}\n")})
	p, err := chartutil.Save(c, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	archive, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(archive)
	digest = "sha256:" + hex.EncodeToString(sum[:])
	idx := repo.NewIndexFile()
	if err := idx.MustAdd(c.Metadata, filepath.Base(p), "", strings.TrimPrefix(digest, "sha256:")); err != nil {
		t.Fatal(err)
	}
	index, err := yaml.Marshal(idx)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/helm.cilium.io/index.yaml":
			_, _ = w.Write(index)
		case "/helm.cilium.io/" + filepath.Base(p):
			_, _ = w.Write(archive)
		default:
			standIns.ServeHTTP(w, r)
		}
	}))
	t.Cleanup(srv.Close)
	return srv.URL, digest
}

// The case, end to end: a real run (its Hetzner API is not the
// sandbox's: a proxy drops the marker) through a local chart mirror that
// serves a modified cilium chart is refused before anything is created,
// naming the chart, the mirror and both digests, and the mirror is named
// on stderr.
func TestRealRunThroughAChartMirrorRefusesAnotherArchive(t *testing.T) {
	seed, err := os.ReadFile("../../examples/seed.yaml")
	if err != nil {
		t.Fatal(err)
	}
	sb, cfg := externalSandbox(t, string(seed))
	writes := unmarkedHetzner(t, sb)
	mirror, tampered := tamperedMirror(t)
	t.Setenv("OHMYTALOS_CHART_MIRROR", mirror)

	stdout, stderr, err := runSplit(t, "apply", "--config", cfg, "--plain")
	if err == nil {
		t.Fatalf("apply through a mirror serving a modified cilium chart succeeded:\n%s%s", stdout, stderr)
	}
	pin, _ := addons.ChartOf(addons.Cilium)
	mustContain(t, "error", err.Error(), "add-on cilium", "cilium 1.19.6 from https://helm.cilium.io/", "chart mirror "+mirror,
		tampered, pin.Ref.Digest, "nothing was created")
	if strings.Contains(stdout, "SANDBOX") {
		t.Errorf("the run through the proxy was taken for a sandbox run:\n%s", stdout)
	}
	if w := writes(); len(w) != 0 {
		t.Errorf("apply changed the Hetzner project before refusing the chart: %v", w)
	}
	for kind, n := range sb.HCloud.Counts() {
		if n != 0 {
			t.Errorf("apply created %d %s before refusing the chart", n, kind)
		}
	}
	mustContain(t, "stderr", stderr, "chart mirror "+mirror+": 0 charts fetched through it; 1 refused")
}

// A real run whose mirror serves the archives the spec pins fetches them
// and names the mirror and their number on stderr, with a warning for
// the chart ohmytalos pins no digest for (an addons.extra chart).
func TestChartMirrorOutsideTheSandboxIsNamedOnStderr(t *testing.T) {
	repoSrv, err := chartrepo.New()
	if err != nil {
		t.Fatal(err)
	}
	standIn := map[string]string{}
	for _, c := range repoSrv.Charts() {
		standIn[c.Name] = "sha256:" + c.Digest
	}
	mirror := httptest.NewServer(repoSrv)
	t.Cleanup(mirror.Close)

	seed, err := os.ReadFile("../../examples/seed.yaml")
	if err != nil {
		t.Fatal(err)
	}
	sp, err := spec.Parse(seed)
	if err != nil {
		t.Fatal(err)
	}
	// The spec pins the archives this mirror serves (the sandbox's
	// stand-ins stand for real archives here), all but the extra chart's.
	text := string(seed) + "addons:\n"
	on := addons.Enabled(sp)
	n := 0
	for _, c := range addons.Charts() {
		if on[c.Addon] {
			text += fmt.Sprintf("  %s: {chart: {digest: %q}}\n", c.Key, standIn[c.Ref.Name])
			n++
		}
	}
	text += "  extra:\n    - {name: metrics, namespace: extras, chart: {repository: \"https://kubernetes-sigs.github.io/metrics-server/\", name: metrics-server, version: 3.13.0}}\n"
	sb, cfg := externalSandbox(t, text)
	unmarkedHetzner(t, sb)
	t.Setenv("OHMYTALOS_CHART_MIRROR", mirror.URL)

	stdout, stderr, err := runSplit(t, "talos-config", "--config", cfg, "--out", filepath.Join(filepath.Dir(cfg), "configs"), "--redact")
	if err != nil {
		t.Fatalf("talos-config: %v\n%s%s", err, stdout, stderr)
	}
	mustContain(t, "stderr", stderr, fmt.Sprintf("chart mirror %s: %d charts fetched through it, 1 of them with no pinned digest", mirror.URL, n+1),
		"warning: no pinned digest for metrics-server 3.13.0 from https://kubernetes-sigs.github.io/metrics-server/", "addons.extra[0].chart.digest")
	if strings.Count(stderr, "chart mirror "+mirror.URL+":") != 1 {
		t.Errorf("the mirror is not named on exactly one line:\n%s", stderr)
	}
	if strings.Contains(stdout, "chart mirror") {
		t.Errorf("the mirror line went to stdout:\n%s", stdout)
	}
}
