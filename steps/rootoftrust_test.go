package steps

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ohmytalos/ohmytalos/internal/state"
)

// readSecrets returns every secrets/*.age file's bytes.
func readSecrets(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "secrets", "*.age"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no secrets in %s: %v", dir, err)
	}
	out := map[string][]byte{}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		out[filepath.Base(f)] = b
	}
	return out
}

// TestLostStateKeepsTheBundle is issue 21's first scenario: the state file
// is corrupt, the error's advice is followed, and apply runs again. The
// bundle survives byte for byte and apply converges on the same cluster.
func TestLostStateKeepsTheBundle(t *testing.T) {
	t.Parallel()
	w := newWorld(t, "../examples/seed.yaml")
	if _, err := w.apply(t, context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	before := readSecrets(t, w.Dir)
	statePath := filepath.Join(w.Dir, "state.json")
	if err := os.WriteFile(statePath, []byte("{not json"), 0o600); err != nil {
		t.Fatal(err)
	}
	msg := openErr(t, w)
	for _, want := range []string{"keep " + filepath.Join(w.Dir, "secrets"), "never delete or move it", "state.json.bak", "move only state.json aside"} {
		if !strings.Contains(msg, want) {
			t.Errorf("corrupt-state error lacks %q: %s", want, msg)
		}
	}
	if strings.Contains(msg, "start over") {
		t.Errorf("corrupt-state error still suggests starting over: %s", msg)
	}
	// Follow the advice: move only state.json aside.
	if err := os.Rename(statePath, statePath+".broken"); err != nil {
		t.Fatal(err)
	}
	if _, err := w.apply(t, context.Background(), nil); err != nil {
		t.Fatalf("apply after the state was moved aside: %v", err)
	}
	after := readSecrets(t, w.Dir)
	for _, name := range []string{secretBundle + ".age", secretDisk + ".age"} {
		if !bytes.Equal(before[name], after[name]) {
			t.Errorf("%s changed after the state was rebuilt", name)
		}
	}
	w.CheckCounts(t)
}

// openErr returns the error state.Open gives on w's state directory.
func openErr(t *testing.T, w *world) string {
	t.Helper()
	_, err := state.Open(w.Dir, w.Spec.Name, nil)
	if err == nil {
		t.Fatal("state opened despite the corrupt file")
	}
	return err.Error()
}

// TestNoNewBundleOverLiveServers: the whole state folder is gone, secrets
// included. apply must refuse to make a new bundle for the servers that
// exist, and say how to recover.
func TestNoNewBundleOverLiveServers(t *testing.T) {
	t.Parallel()
	w := newWorld(t, "../examples/seed.yaml")
	if _, err := w.apply(t, context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	old := w.Dir
	bundle := readSecrets(t, old)[secretBundle+".age"]
	w.Dir = t.TempDir()
	_, err := w.apply(t, context.Background(), nil)
	if err == nil {
		t.Fatal("apply over a live cluster without its bundle succeeded")
	}
	if !strings.Contains(err.Error(), "refusing to create a new Talos secrets bundle") && !strings.Contains(err.Error(), "another checkout") {
		t.Errorf("error does not say why: %v", err)
	}
	if _, statErr := os.Stat(filepath.Join(w.Dir, "secrets", secretBundle+".age")); statErr == nil {
		t.Error("a new bundle was written")
	}
	if got := readSecrets(t, old)[secretBundle+".age"]; !bytes.Equal(got, bundle) {
		t.Error("the old bundle changed")
	}
	if n := w.SB.Talos.Bootstraps(w.Spec.Name); n != 1 {
		t.Errorf("etcd bootstrapped %d times, want 1", n)
	}
}
