package chartrepo_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"testing"

	chart "helm.sh/helm/v4/pkg/chart/v2"
	"helm.sh/helm/v4/pkg/chart/v2/loader"
	repo "helm.sh/helm/v4/pkg/repo/v1"

	"github.com/ohmytalos/ohmytalos/internal/sandbox/chartrepo"
)

// pinned are HELM-DESIGN.md's charts and versions, per repository.
var pinned = map[string]map[string]string{
	"helm.cilium.io":                           {"cilium": "1.19.6"},
	"charts.hetzner.cloud":                     {"hcloud-cloud-controller-manager": "1.35.0", "hcloud-csi": "2.22.1"},
	"charts.longhorn.io":                       {"longhorn": "1.10.1"},
	"kubernetes-sigs.github.io/metrics-server": {"metrics-server": "3.13.0"},
	"traefik.github.io/charts":                 {"traefik": "41.6.0"},
}

// appVersions are the upstream Chart.yamls' (the Hetzner charts have none).
var appVersions = map[string]string{"cilium": "1.19.6", "hcloud-cloud-controller-manager": "", "hcloud-csi": "",
	"longhorn": "v1.10.1", "metrics-server": "0.8.0", "traefik": "v3.7.13"}

func serve(t *testing.T) string {
	t.Helper()
	s, err := chartrepo.New()
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(s)
	t.Cleanup(ts.Close)
	return ts.URL
}

func get(t *testing.T, u string) (int, []byte) {
	t.Helper()
	resp, err := http.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, b
}

// fetchIndex downloads and parses a repository's index with helm's own
// index loader, as `helm repo add` does.
func fetchIndex(t *testing.T, repoURL string) *repo.IndexFile {
	t.Helper()
	code, body := get(t, repoURL+"/index.yaml")
	if code != http.StatusOK {
		t.Fatalf("GET %s/index.yaml: %d %s", repoURL, code, body)
	}
	p := filepath.Join(t.TempDir(), "index.yaml")
	if err := os.WriteFile(p, body, 0o600); err != nil {
		t.Fatal(err)
	}
	idx, err := repo.LoadIndexFile(p)
	if err != nil {
		t.Fatalf("helm refuses %s/index.yaml: %v", repoURL, err)
	}
	return idx
}

// download fetches an entry's archive (its URL resolved against the
// repository URL, as helm does), checks the index's digest and loads it.
func download(t *testing.T, repoURL string, cv *repo.ChartVersion) *chart.Chart {
	t.Helper()
	if len(cv.URLs) != 1 {
		t.Fatalf("%s %s: urls %v", cv.Name, cv.Version, cv.URLs)
	}
	base, err := url.Parse(repoURL + "/")
	if err != nil {
		t.Fatal(err)
	}
	ref, err := url.Parse(cv.URLs[0])
	if err != nil {
		t.Fatal(err)
	}
	code, body := get(t, base.ResolveReference(ref).String())
	if code != http.StatusOK {
		t.Fatalf("GET %s: %d", cv.URLs[0], code)
	}
	sum := sha256.Sum256(body)
	if got := hex.EncodeToString(sum[:]); got != cv.Digest {
		t.Fatalf("%s %s: archive sha256 %s, index digest %s", cv.Name, cv.Version, got, cv.Digest)
	}
	c, err := loader.LoadArchive(bytes.NewReader(body))
	if err != nil {
		t.Fatalf("helm's loader refuses %s: %v", cv.URLs[0], err)
	}
	return c
}

func TestEveryRepositoryServesItsPinnedCharts(t *testing.T) {
	base := serve(t)
	for path, want := range pinned {
		idx := fetchIndex(t, base+"/"+path)
		if len(idx.Entries) != len(want) {
			t.Errorf("%s lists %d charts, want %d", path, len(idx.Entries), len(want))
		}
		for name, version := range want {
			cv, err := idx.Get(name, version)
			if err != nil {
				t.Errorf("%s: %s %s: %v", path, name, version, err)
				continue
			}
			c := download(t, base+"/"+path, cv)
			if c.Name() != name || c.Metadata.Version != version || c.Metadata.AppVersion != appVersions[name] {
				t.Errorf("%s: archive holds %s %s (app %q)", path, c.Name(), c.Metadata.Version, c.Metadata.AppVersion)
			}
		}
	}
}

func TestArchivesAreTheSameOnEveryStart(t *testing.T) {
	a, err := chartrepo.New()
	if err != nil {
		t.Fatal(err)
	}
	b, err := chartrepo.New()
	if err != nil {
		t.Fatal(err)
	}
	ca, cb := a.Charts(), b.Charts()
	if len(ca) != 6 || len(ca) != len(cb) {
		t.Fatalf("%d and %d charts, want 6", len(ca), len(cb))
	}
	for i := range ca {
		if ca[i].Digest != cb[i].Digest || !bytes.Equal(ca[i].Archive, cb[i].Archive) {
			t.Errorf("%s: digests %s and %s", ca[i].Name, ca[i].Digest, cb[i].Digest)
		}
	}
}

// TestRefusesWhatAStaticRepositoryRefuses: unknown paths, directories and
// writes; HEAD is answered.
func TestRefusesWhatAStaticRepositoryRefuses(t *testing.T) {
	base := serve(t)
	for _, p := range []string{
		"/", "/helm.cilium.io", "/helm.cilium.io/", "/helm.cilium.io/index.yml",
		"/helm.cilium.io/cilium-1.19.5.tgz", "/charts.hetzner.cloud/cilium-1.19.6.tgz",
		"/kubernetes-sigs.github.io/index.yaml",
	} {
		if code, _ := get(t, base+p); code != http.StatusNotFound {
			t.Errorf("GET %s: %d, want 404", p, code)
		}
	}
	head, err := http.Head(base + "/helm.cilium.io/index.yaml")
	if err != nil {
		t.Fatal(err)
	}
	head.Body.Close()
	if head.StatusCode != http.StatusOK || head.ContentLength <= 0 {
		t.Errorf("HEAD index.yaml: %d, length %d", head.StatusCode, head.ContentLength)
	}
	resp, err := http.Post(base+"/helm.cilium.io/index.yaml", "application/x-yaml", nil)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusMethodNotAllowed {
		t.Errorf("POST index.yaml: %d, want 405", resp.StatusCode)
	}
}

// BenchmarkNew is what every sandbox start pays to package the stand-ins.
func BenchmarkNew(b *testing.B) {
	for b.Loop() {
		if _, err := chartrepo.New(); err != nil {
			b.Fatal(err)
		}
	}
}
