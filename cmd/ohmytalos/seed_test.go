package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/ohmytalos/ohmytalos/internal/sandbox"
	"github.com/ohmytalos/ohmytalos/internal/state"
)

// run executes the CLI in-process and returns stdout and the error.
func run(t *testing.T, args ...string) (string, error) {
	t.Helper()
	out, errb, err := runSplit(t, args...)
	return out + errb, err
}

// seedDir is a new temporary folder holding the seed spec as
// ohmytalos.yaml; the test's age identity file is age.key in it, and no
// Hetzner token or endpoint is set.
func seedDir(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	b, err := os.ReadFile("../../examples/seed.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "ohmytalos.yaml"), b, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("OHMYTALOS_AGE_KEY_FILE", filepath.Join(dir, "age.key"))
	t.Setenv("HCLOUD_TOKEN", "")
	t.Setenv("HCLOUD_ENDPOINT", "")
	return dir
}

// seedConfig is seedDir and the path of the spec file in it.
func seedConfig(t *testing.T) (dir, cfg string) {
	t.Helper()
	dir = seedDir(t)
	return dir, filepath.Join(dir, "ohmytalos.yaml")
}

// hetznerSeed is seedConfig with a sandbox Hetzner API (hetznerFor).
func hetznerSeed(t *testing.T) (dir, cfg string) {
	t.Helper()
	dir, cfg = seedConfig(t)
	hetznerFor(t, strings.Repeat("s", 64))
	return dir, cfg
}

// sandboxSeed is seedConfig with a standalone sandbox (standaloneSandbox).
func sandboxSeed(t *testing.T) (dir, cfg string) {
	t.Helper()
	dir, cfg = seedConfig(t)
	standaloneSandbox(t, sandbox.Options{})
	return dir, cfg
}

// holdLock takes the lock of the seed cluster's state in dir, as a
// running apply holds it, until the test ends.
func holdLock(t *testing.T, dir string) {
	t.Helper()
	st, err := state.Open(filepath.Join(dir, ".ohmytalos", "demo"), "demo", nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Lock("ohmytalos apply"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Unlock() })
}

// tempFile writes body to a file called name in a new temporary folder and
// returns its path.
func tempFile(t *testing.T, name, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// builtBinary is the ohmytalos binary, built once for the package's
// tests (each go build links a new 150 MB binary); TestMain removes it.
var builtBinary struct {
	sync.Mutex
	dir, bin string
}

// removeBuiltBinary removes what builtCLI built; TestMain calls it.
func removeBuiltBinary() {
	if builtBinary.dir != "" {
		os.RemoveAll(builtBinary.dir)
	}
}

// builtCLI builds the ohmytalos binary (once per test binary), makes a new
// temporary folder dir and demo, the working folder of a cluster, in it;
// it returns the three.
func builtCLI(t testing.TB) (dir, bin, work string) {
	t.Helper()
	b := &builtBinary
	b.Lock()
	if b.bin == "" {
		d, err := os.MkdirTemp("", "ohmytalos-cmd-bin-")
		if err != nil {
			b.Unlock()
			t.Fatal(err)
		}
		if out, err := exec.Command("go", "build", "-o", filepath.Join(d, "ohmytalos"), ".").CombinedOutput(); err != nil {
			os.RemoveAll(d)
			b.Unlock()
			t.Fatalf("build: %v\n%s", err, out)
		}
		b.dir, b.bin = d, filepath.Join(d, "ohmytalos")
	}
	bin = b.bin
	b.Unlock()
	dir = t.TempDir()
	work = filepath.Join(dir, "demo")
	if err := os.MkdirAll(work, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir, bin, work
}
