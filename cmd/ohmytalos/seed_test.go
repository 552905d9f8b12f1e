package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ohmytalos/ohmytalos/internal/sandbox"
	"github.com/ohmytalos/ohmytalos/internal/state"
)

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
