package charts

import (
	"context"
	"errors"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

func fetch(t *testing.T, s *Source, r Ref) (*Chart, error) {
	t.Helper()

	return s.FetchFor(context.Background(), "demo", r)
}

func TestFetchPinnedVerifiesAndCaches(t *testing.T) {
	repo := newTestRepo(t, "/charts", "", "1.0.0", "1.1.0")
	s := &Source{CacheDir: t.TempDir()}
	ref := Ref{Repository: repo.URL() + "/", Name: "demo", Version: "1.1.0", Digest: repo.digests["1.1.0"]}

	c, err := fetch(t, s, ref)
	if err != nil {
		t.Fatal(err)
	}

	if c.Digest != repo.digests["1.1.0"] || c.Chart.Metadata.Version != "1.1.0" {
		t.Fatalf("got %s %s, want 1.1.0 %s", c.Chart.Metadata.Version, c.Digest, repo.digests["1.1.0"])
	}

	p := cacheFile(t, s.CacheDir, c.Digest)
	for _, f := range []string{p, filepath.Dir(p)} {
		fi, err := os.Stat(f)
		if err != nil {
			t.Fatal(err)
		}

		if fi.Mode().Perm()&0o077 != 0 {
			t.Errorf("%s has mode %04o, want private", f, fi.Mode().Perm())
		}
	}

	// A pinned chart in the cache is used without the network.
	repo.srv.Close()

	if _, err := fetch(t, s, ref); err != nil {
		t.Fatalf("a pinned, cached chart needs no repository: %v", err)
	}
}

func TestFetchUnpinnedReusesCache(t *testing.T) {
	repo := newTestRepo(t, "", "", "1.0.0")
	s := &Source{CacheDir: t.TempDir()}
	ref := Ref{Repository: repo.URL(), Name: "demo", Version: "1.0.0"}

	for range 2 {
		if _, err := fetch(t, s, ref); err != nil {
			t.Fatal(err)
		}
	}

	if n := repo.count("/demo-1.0.0.tgz"); n != 1 {
		t.Fatalf("archive downloaded %d times, want once (then from the cache)", n)
	}

	if n := repo.count("/index.yaml"); n != 2 {
		t.Fatalf("index downloaded %d times, want 2 (an unpinned chart's digest comes from the index)", n)
	}
}

func TestFetchDigestMismatch(t *testing.T) {
	repo := newTestRepo(t, "", "", "1.0.0")
	s := &Source{CacheDir: t.TempDir()}
	pinned := "sha256:" + strings.Repeat("ab", 32)

	_, err := fetch(t, s, Ref{Repository: repo.URL(), Name: "demo", Version: "1.0.0", Digest: pinned})
	if err == nil {
		t.Fatal("a pinned digest the index does not list was accepted")
	}

	mustName(t, err, "add-on demo", pinned, repo.digests["1.0.0"], "addons.demo.chart.digest")

	if repo.count("/demo-1.0.0.tgz") != 0 {
		t.Error("the archive was downloaded although its index digest mismatched the pin")
	}
}

func TestFetchTamperedArchive(t *testing.T) {
	repo := newTestRepo(t, "", "", "1.0.0")
	other := packageDemo(t, func(c *chartT) { c.Metadata.Description = "tampered" })
	repo.set("/demo-1.0.0.tgz", other)

	s := &Source{CacheDir: t.TempDir()}

	_, err := fetch(t, s, Ref{Repository: repo.URL(), Name: "demo", Version: "1.0.0", Digest: repo.digests["1.0.0"]})
	if err == nil {
		t.Fatal("an archive whose digest is not the index's was accepted")
	}

	mustName(t, err, digestOf(other), repo.digests["1.0.0"])

	if _, serr := os.Stat(filepath.Join(s.CacheDir, "sha256")); serr == nil {
		entries, _ := os.ReadDir(filepath.Join(s.CacheDir, "sha256"))
		if len(entries) != 0 {
			t.Errorf("a refused archive was cached: %v", entries)
		}
	}
}

func TestFetchRefetchesCorruptCache(t *testing.T) {
	repo := newTestRepo(t, "", "", "1.0.0")
	s := &Source{CacheDir: t.TempDir()}
	ref := Ref{Repository: repo.URL(), Name: "demo", Version: "1.0.0", Digest: repo.digests["1.0.0"]}

	if _, err := fetch(t, s, ref); err != nil {
		t.Fatal(err)
	}

	p := cacheFile(t, s.CacheDir, ref.Digest)
	if err := os.WriteFile(p, []byte("not the chart"), 0o600); err != nil {
		t.Fatal(err)
	}

	c, err := fetch(t, s, ref)
	if err != nil {
		t.Fatal(err)
	}

	if c.Digest != ref.Digest || repo.count("/demo-1.0.0.tgz") != 2 {
		t.Fatalf("corrupt cache entry not refetched: digest %s, %d downloads", c.Digest, repo.count("/demo-1.0.0.tgz"))
	}

	data, err := os.ReadFile(p)
	if err != nil || digestOf(data) != ref.Digest {
		t.Fatalf("cache entry not repaired: %v", err)
	}
}

func TestFetchConcurrentSameChart(t *testing.T) {
	repo := newTestRepo(t, "", "", "1.0.0")
	s := &Source{CacheDir: t.TempDir()}
	ref := Ref{Repository: repo.URL(), Name: "demo", Version: "1.0.0", Digest: repo.digests["1.0.0"]}

	var wg sync.WaitGroup

	errs := make([]error, 8)
	for i := range errs {
		wg.Go(func() { _, errs[i] = fetch(t, s, ref) })
	}

	wg.Wait()

	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}

	entries, err := os.ReadDir(filepath.Join(s.CacheDir, "sha256"))
	if err != nil || len(entries) != 1 {
		t.Fatalf("cache holds %v (%v), want the one archive and no temporary files", entries, err)
	}
}

func TestFetchMirrorStandIns(t *testing.T) {
	// The mirror serves https://charts.example.test/sub under its
	// /charts.example.test/sub, with absolute archive URLs to the
	// upstream host (rewritten to the mirror too). It is the sandbox's,
	// serving stand-ins.
	repo := newTestRepo(t, "/charts.example.test/sub", "https://charts.example.test/sub", "1.0.0")
	s := &Source{CacheDir: t.TempDir(), Mirror: repo.srv.URL + "/", StandIns: true}

	// The stand-in's digest is not the pinned upstream one: accepted.
	upstream := "sha256:" + strings.Repeat("cd", 32)

	c, err := fetch(t, s, Ref{Repository: "https://charts.example.test/sub/", Name: "demo", Version: "1.0.0", Digest: upstream})
	if err != nil {
		t.Fatal(err)
	}

	if c.Digest != repo.digests["1.0.0"] || repo.count("/demo-1.0.0.tgz") != 1 {
		t.Fatalf("got digest %s, %d archive downloads from the mirror", c.Digest, repo.count("/demo-1.0.0.tgz"))
	}

	// The mirror's own index digest is still enforced.
	repo.set("/demo-1.0.0.tgz", packageDemo(t, func(c *chartT) { c.Metadata.Description = "tampered" }))

	s.CacheDir = t.TempDir()
	if _, err := fetch(t, s, Ref{Repository: "https://charts.example.test/sub", Name: "demo", Version: "1.0.0"}); err == nil || !strings.Contains(err.Error(), "digest mismatch") {
		t.Fatalf("a mirror archive that is not its index's digest: %v", err)
	}
}

func TestFetchLocalPath(t *testing.T) {
	s := &Source{CacheDir: t.TempDir()}

	c, err := fetch(t, s, Ref{Path: "testdata/demo", Repository: "https://unused.example", Name: "demo", Version: "9.9.9"})
	if err != nil {
		t.Fatal(err)
	}

	if c.Chart.Name() != "demo" || c.Digest != "" {
		t.Fatalf("dir: got %s digest %q", c.Chart.Name(), c.Digest)
	}

	data := packageDemo(t, nil)
	tgz := filepath.Join(t.TempDir(), "demo-1.0.0.tgz")

	if err := os.WriteFile(tgz, data, 0o600); err != nil {
		t.Fatal(err)
	}

	c, err = fetch(t, s, Ref{Path: tgz})
	if err != nil {
		t.Fatal(err)
	}

	if c.Digest != digestOf(data) || c.Chart.Metadata.Version != "1.0.0" {
		t.Fatalf("tgz: got %s %s", c.Chart.Metadata.Version, c.Digest)
	}

	_, err = fetch(t, s, Ref{Path: filepath.Join(t.TempDir(), "missing.tgz")})
	if err == nil || !strings.Contains(err.Error(), "addons.demo.chart.path") {
		t.Fatalf("missing path: %v", err)
	}
}

func TestFetchUnknownVersionListsNearest(t *testing.T) {
	repo := newTestRepo(t, "", "", "1.0.0", "1.0.1", "1.1.0", "2.0.0")
	s := &Source{CacheDir: t.TempDir()}

	_, err := fetch(t, s, Ref{Repository: repo.URL(), Name: "demo", Version: "1.0.9"})
	if err == nil {
		t.Fatal("a version the index does not list was accepted")
	}

	mustName(t, err, "1.0.9", "nearest: 1.0.1, 1.0.0, 1.1.0, 2.0.0", "addons.demo.chart.version")

	_, err = fetch(t, s, Ref{Repository: repo.URL(), Name: "nope", Version: "1.0.0"})
	if err == nil || !strings.Contains(err.Error(), `no chart "nope" (it has demo)`) {
		t.Fatalf("unknown chart: %v", err)
	}
}

func TestFetchUnreachableRepository(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}

	url := "http://" + l.Addr().String()
	l.Close()

	_, err = fetch(t, &Source{CacheDir: t.TempDir()}, Ref{Repository: url, Name: "demo", Version: "1.0.0"})
	if err == nil {
		t.Fatal("an unreachable repository did not fail")
	}

	mustName(t, err, "add-on demo", url, "unreachable", "addons.demo.chart.repository", "addons.demo.chart.path")

	var fe *FetchError
	if !errors.As(err, &fe) || fe.Addon != "demo" {
		t.Errorf("error is not a *FetchError for demo: %T", err)
	}
}
