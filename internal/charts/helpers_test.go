package charts

import (
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	chart "helm.sh/helm/v4/pkg/chart/v2"
	"helm.sh/helm/v4/pkg/chart/v2/loader"
	chartutil "helm.sh/helm/v4/pkg/chart/v2/util"
	repo "helm.sh/helm/v4/pkg/repo/v1"
	"sigs.k8s.io/yaml"
)

// testRepo is a Helm HTTP repository serving charts the tests package
// from testdata (index.yaml and archives, as `helm repo index` lays
// them out), counting requests per path.
type testRepo struct {
	srv     *httptest.Server
	prefix  string            // path prefix the repository lives under
	files   map[string][]byte // path -> body
	digests map[string]string // version -> sha256:<hex>

	mu   sync.Mutex
	hits map[string]int
}

// newTestRepo packages testdata/demo at each version and serves them
// under prefix ("" = root). absolute makes the index's URLs absolute
// under absBase (as cilium's index points at github.com).
func newTestRepo(t *testing.T, prefix, absBase string, versions ...string) *testRepo {
	t.Helper()

	r := &testRepo{prefix: prefix, files: map[string][]byte{}, digests: map[string]string{}, hits: map[string]int{}}
	idx := repo.NewIndexFile()

	for _, v := range versions {
		data := packageDemo(t, func(c *chart.Chart) { c.Metadata.Version = v })
		name := "demo-" + v + ".tgz"
		r.files[prefix+"/"+name] = data
		r.digests[v] = digestOf(data)

		md := *loadDemo(t).Metadata
		md.Version = v

		if err := idx.MustAdd(&md, name, absBase, strings.TrimPrefix(digestOf(data), "sha256:")); err != nil {
			t.Fatal(err)
		}
	}

	raw, err := yaml.Marshal(idx)
	if err != nil {
		t.Fatal(err)
	}

	r.files[prefix+"/index.yaml"] = raw

	r.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		r.mu.Lock()
		r.hits[req.URL.Path]++
		body, ok := r.files[req.URL.Path]
		r.mu.Unlock()

		if !ok {
			http.NotFound(w, req)
			return
		}

		_, _ = w.Write(body)
	}))
	t.Cleanup(r.srv.Close)

	return r
}

// URL is the repository's URL.
func (r *testRepo) URL() string { return r.srv.URL + r.prefix }

func (r *testRepo) count(path string) int {
	r.mu.Lock()
	defer r.mu.Unlock()

	return r.hits[r.prefix+path]
}

func (r *testRepo) set(path string, body []byte) {
	r.mu.Lock()
	defer r.mu.Unlock()

	r.files[r.prefix+path] = body
}

// loadDemo loads testdata/demo.
func loadDemo(t *testing.T) *chart.Chart {
	t.Helper()

	c, err := loader.LoadDir("testdata/demo")
	if err != nil {
		t.Fatal(err)
	}

	return c
}

// packageDemo is testdata/demo, changed by edit, as a .tgz.
func packageDemo(t *testing.T, edit func(*chart.Chart)) []byte {
	t.Helper()

	c := loadDemo(t)
	if edit != nil {
		edit(c)
	}

	dir := t.TempDir()

	p, err := chartutil.Save(c, dir)
	if err != nil {
		t.Fatal(err)
	}

	data, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}

	return data
}

// cacheFile is the one archive in the cache dir.
func cacheFile(t *testing.T, dir, digest string) string {
	t.Helper()

	p := filepath.Join(dir, "sha256", strings.TrimPrefix(digest, "sha256:")+".tgz")
	if _, err := os.Stat(p); err != nil {
		t.Fatalf("no cache entry for %s: %v", digest, err)
	}

	return p
}

// chartT is helm's chart type, for edits in tests.
type chartT = chart.Chart

// mustName fails t unless err names every one of wants.
func mustName(t *testing.T, err error, wants ...string) {
	t.Helper()
	for _, w := range wants {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("error %q does not name %q", err, w)
		}
	}
}

// mustContain fails t for each of wants that text lacks, naming what.
func mustContain(t *testing.T, what, text string, wants ...string) {
	t.Helper()
	for _, w := range wants {
		if !strings.Contains(text, w) {
			t.Errorf("%s lacks %q:\n%s", what, w, text)
		}
	}
}
