package charts

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// mirrorRepo is a mirror of https://charts.example.test/sub serving the
// demo chart at 1.0.0, and the upstream Ref of that chart.
func mirrorRepo(t *testing.T) (*testRepo, Ref) {
	t.Helper()
	repo := newTestRepo(t, "/charts.example.test/sub", "https://charts.example.test/sub", "1.0.0")
	return repo, Ref{Repository: "https://charts.example.test/sub/", Name: "demo", Version: "1.0.0"}
}

// Outside the sandbox a mirror is only another place to fetch the same
// archives from: the one that matches the pin is taken (and cached apart
// from upstream fetches), another is refused naming the chart, the mirror
// and both digests.
func TestFetchMirrorChecksThePinnedDigest(t *testing.T) {
	repo, ref := mirrorRepo(t)
	use := &MirrorUse{}
	s := &Source{CacheDir: t.TempDir(), Mirror: repo.srv.URL, Use: use}

	real := repo.digests["1.0.0"]
	ref.Digest = real
	c, err := fetch(t, s, ref)
	if err != nil {
		t.Fatalf("the mirror serves the pinned archive: %v", err)
	}
	if c.Digest != real {
		t.Fatalf("got %s, want the pinned %s", c.Digest, real)
	}
	if _, err := os.Stat(filepath.Join(s.CacheDir, "mirror", "sha256", strings.TrimPrefix(real, "sha256:")+".tgz")); err != nil {
		t.Errorf("the mirror's archive is not cached under mirror/: %v", err)
	}
	if _, err := os.Stat(filepath.Join(s.CacheDir, "sha256")); err == nil {
		t.Error("the mirror's archive was cached with the upstream fetches")
	}

	// The index lists another digest than the pin: refused, the archive
	// not even downloaded.
	pinned := "sha256:" + strings.Repeat("cd", 32)
	ref.Digest = pinned
	_, err = fetch(t, s, ref)
	if err == nil {
		t.Fatal("a mirror whose index lists another digest than the pin was trusted")
	}
	mustName(t, err, "add-on demo", "demo 1.0.0 from https://charts.example.test/sub/", "chart mirror "+repo.srv.URL, pinned, real, "OHMYTALOS_CHART_MIRROR")
	if n := repo.count("/demo-1.0.0.tgz"); n != 1 {
		t.Errorf("archive downloaded %d times, want once (the refused one not at all)", n)
	}

	// The index lists the pin, the archive is another: refused too.
	tampered := packageDemo(t, func(c *chartT) { c.Metadata.Description = "tampered" })
	repo.set("/demo-1.0.0.tgz", tampered)
	s.CacheDir = t.TempDir()
	ref.Digest = real
	_, err = fetch(t, s, ref)
	if err == nil {
		t.Fatal("a mirror archive other than the pinned one was accepted")
	}
	mustName(t, err, "add-on demo", "chart mirror "+repo.srv.URL, digestOf(tampered), real)

	line, warnings := use.Summary()
	mustContain(t, "summary", line, "chart mirror "+repo.srv.URL, "1 chart fetched through it", "1 refused")
	if len(warnings) != 0 {
		t.Errorf("pinned charts gave warnings: %v", warnings)
	}
}

// A chart ohmytalos pins no digest for is taken from the mirror against
// the mirror's own index, and reported: never a silent pass.
func TestFetchMirrorUnpinnedIsAWarning(t *testing.T) {
	repo, ref := mirrorRepo(t)
	use := &MirrorUse{}
	s := &Source{CacheDir: t.TempDir(), Mirror: repo.srv.URL + "/", Use: use}

	for range 2 {
		if _, err := fetch(t, s, ref); err != nil {
			t.Fatal(err)
		}
	}
	line, warnings := use.Summary()
	mustContain(t, "summary", line, "chart mirror "+repo.srv.URL+":", "1 chart fetched through it", "1 of them with no pinned digest")
	if len(warnings) != 1 {
		t.Fatalf("want one warning, got %v", warnings)
	}
	mustContain(t, "warning", warnings[0], "no pinned digest for demo 1.0.0 from https://charts.example.test/sub/", repo.srv.URL, "addons.demo.chart.digest")

	// The mirror's index is still enforced.
	repo.set("/demo-1.0.0.tgz", packageDemo(t, func(c *chartT) { c.Metadata.Description = "tampered" }))
	s.CacheDir = t.TempDir()
	if _, err := fetch(t, s, ref); err == nil || !strings.Contains(err.Error(), "digest mismatch") {
		t.Fatalf("an archive that is not the mirror index's digest: %v", err)
	}
}

// The sandbox's stand-ins are tallied as such, with no warnings.
func TestMirrorUseStandIns(t *testing.T) {
	repo, ref := mirrorRepo(t)
	use := &MirrorUse{}
	s := &Source{CacheDir: t.TempDir(), Mirror: repo.srv.URL, StandIns: true, Use: use}
	if _, err := fetch(t, s, ref); err != nil {
		t.Fatal(err)
	}
	line, warnings := use.Summary()
	mustContain(t, "summary", line, "1 chart fetched through it", "the sandbox's stand-ins")
	if len(warnings) != 0 {
		t.Errorf("stand-ins gave warnings: %v", warnings)
	}

	// No mirror, nothing to say.
	if line, _ := (&MirrorUse{}).Summary(); line != "" {
		t.Errorf("an unused mirror says %q", line)
	}
	local := &MirrorUse{}
	if _, err := fetch(t, &Source{CacheDir: t.TempDir(), Mirror: repo.srv.URL, Use: local}, Ref{Path: "testdata/demo"}); err != nil {
		t.Fatal(err)
	}
	if line, _ := local.Summary(); line != "" {
		t.Errorf("a local chart was tallied as fetched through the mirror: %q", line)
	}
}

// A digest set with a local path is checked: the .tgz must have it, a
// directory (no archive digest) is refused.
func TestFetchLocalPathChecksItsDigest(t *testing.T) {
	s := &Source{CacheDir: t.TempDir()}
	data := packageDemo(t, nil)
	tgz := filepath.Join(t.TempDir(), "demo-1.0.0.tgz")
	if err := os.WriteFile(tgz, data, 0o600); err != nil {
		t.Fatal(err)
	}

	if _, err := fetch(t, s, Ref{Path: tgz, Digest: digestOf(data)}); err != nil {
		t.Fatalf("the .tgz has the digest: %v", err)
	}

	other := "sha256:" + strings.Repeat("ef", 32)
	_, err := fetch(t, s, Ref{Path: tgz, Digest: other})
	if err == nil {
		t.Fatal("a .tgz with another digest than the pinned one was accepted")
	}
	mustName(t, err, "add-on demo", tgz, other, digestOf(data), "addons.demo.chart")

	_, err = fetch(t, s, Ref{Path: "testdata/demo", Digest: other})
	if err == nil {
		t.Fatal("a chart directory with a digest was accepted unchecked")
	}
	mustName(t, err, "testdata/demo", "chart directory", other, "addons.demo.chart.path", "addons.demo.chart.digest")
}
