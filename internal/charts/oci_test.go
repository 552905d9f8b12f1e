package charts

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// testRegistry is an OCI registry holding Helm charts as helm pushes
// them (pkg/registry/client.go Push: a manifest whose config is
// application/vnd.cncf.helm.config.v1+json and whose one layer is the
// .tgz as application/vnd.cncf.helm.chart.content.v1.tar+gzip), serving
// the pull side of the OCI distribution spec
// (github.com/opencontainers/distribution-spec spec.md: GET /v2/,
// HEAD/GET manifests by tag or digest, GET blobs by digest).
type testRegistry struct {
	srv *httptest.Server

	mu    sync.Mutex
	blobs map[string][]byte // digest -> content
	tags  map[string]string // "repo:tag" -> manifest digest
	pulls int               // chart layer downloads
	layer string            // the last pushed chart layer's digest
}

func newTestRegistry(t *testing.T) *testRegistry {
	t.Helper()

	r := &testRegistry{blobs: map[string][]byte{}, tags: map[string]string{}}
	r.srv = httptest.NewServer(http.HandlerFunc(r.serve))
	t.Cleanup(r.srv.Close)

	return r
}

// push stores chart data as repo:tag.
func (r *testRegistry) push(t *testing.T, repo, tag string, data []byte, name, version string) {
	t.Helper()

	cfg, _ := json.Marshal(map[string]string{"apiVersion": "v2", "name": name, "version": version})
	man, _ := json.Marshal(map[string]any{
		"schemaVersion": 2,
		"mediaType":     "application/vnd.oci.image.manifest.v1+json",
		"config":        map[string]any{"mediaType": "application/vnd.cncf.helm.config.v1+json", "digest": digestOf(cfg), "size": len(cfg)},
		"layers":        []any{map[string]any{"mediaType": "application/vnd.cncf.helm.chart.content.v1.tar+gzip", "digest": digestOf(data), "size": len(data)}},
	})

	r.mu.Lock()
	defer r.mu.Unlock()

	r.blobs[digestOf(cfg)] = cfg
	r.blobs[digestOf(data)] = data
	r.blobs[digestOf(man)] = man
	r.tags[repo+":"+tag] = digestOf(man)
	r.layer = digestOf(data)
}

func (r *testRegistry) layerPulls() int {
	r.mu.Lock()
	defer r.mu.Unlock()

	return r.pulls
}

func (r *testRegistry) serve(w http.ResponseWriter, req *http.Request) {
	if req.URL.Path == "/v2/" {
		w.WriteHeader(http.StatusOK)
		return
	}

	p := strings.TrimPrefix(req.URL.Path, "/v2/")

	r.mu.Lock()
	defer r.mu.Unlock()

	if i := strings.LastIndex(p, "/manifests/"); i >= 0 {
		repo, ref := p[:i], p[i+len("/manifests/"):]

		d := ref
		if !strings.HasPrefix(ref, "sha256:") {
			d = r.tags[repo+":"+ref]
		}

		r.write(w, req, d, "application/vnd.oci.image.manifest.v1+json", "MANIFEST_UNKNOWN")

		return
	}

	if i := strings.LastIndex(p, "/blobs/"); i >= 0 {
		d := p[i+len("/blobs/"):]
		if d == r.layer && req.Method == http.MethodGet {
			r.pulls++
		}

		r.write(w, req, d, "application/octet-stream", "BLOB_UNKNOWN")

		return
	}

	http.NotFound(w, req)
}

func (r *testRegistry) write(w http.ResponseWriter, req *http.Request, digest, mediaType, unknown string) {
	body, ok := r.blobs[digest]
	if !ok {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusNotFound)
		_, _ = w.Write([]byte(`{"errors":[{"code":"` + unknown + `","message":"unknown"}]}`))

		return
	}

	w.Header().Set("Content-Type", mediaType)
	w.Header().Set("Docker-Content-Digest", digest)
	w.Header().Set("Content-Length", strconv.Itoa(len(body)))

	if req.Method != http.MethodHead {
		_, _ = w.Write(body)
	}
}

func TestFetchOCI(t *testing.T) {
	reg := newTestRegistry(t)
	data := packageDemo(t, func(c *chartT) { c.Metadata.Version = "1.2.0+build.1" })
	reg.push(t, "charts/demo", "1.2.0_build.1", data, "demo", "1.2.0+build.1")

	t.Setenv("HELM_REGISTRY_CONFIG", t.TempDir()+"/registry.json")
	t.Setenv("DOCKER_CONFIG", t.TempDir())

	s := &Source{CacheDir: t.TempDir()}
	repo := "oci://" + strings.TrimPrefix(reg.srv.URL, "http://") + "/charts"
	ref := Ref{Repository: repo, Name: "demo", Version: "1.2.0+build.1", Digest: digestOf(data)}

	c, err := fetch(t, s, ref)
	if err != nil {
		t.Fatal(err)
	}

	if c.Digest != digestOf(data) || c.Chart.Metadata.Version != "1.2.0+build.1" {
		t.Fatalf("got %s %s", c.Chart.Metadata.Version, c.Digest)
	}

	// Pinned and cached: no second pull.
	if _, err := fetch(t, s, ref); err != nil || reg.layerPulls() != 1 {
		t.Fatalf("second fetch: %v, %d layer pulls, want 1", err, reg.layerPulls())
	}

	// A pin the registry's chart does not match is refused with both.
	s.CacheDir = t.TempDir()
	ref.Digest = "sha256:" + strings.Repeat("ef", 32)

	_, err = fetch(t, s, ref)
	if err == nil || !strings.Contains(err.Error(), ref.Digest) || !strings.Contains(err.Error(), digestOf(data)) {
		t.Fatalf("pinned digest mismatch: %v", err)
	}

	// An unknown version names the ref and the fix.
	_, err = fetch(t, s, Ref{Repository: repo, Name: "demo", Version: "9.9.9"})
	if err == nil || !strings.Contains(err.Error(), "/charts/demo:9.9.9") || !strings.Contains(err.Error(), "addons.demo.chart.path") {
		t.Fatalf("unknown tag: %v", err)
	}
}
