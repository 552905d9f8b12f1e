package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ohmytalos/ohmytalos/internal/state"
)

// plantState writes a state.json for cluster demo in dir, with a marker
// step so a test can tell whether it survived.
func plantState(t *testing.T, dir string) {
	t.Helper()
	st, err := state.Open(dir, "demo", nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := st.PutData("planted", "yes"); err != nil {
		t.Fatal(err)
	}
}

func planted(dir string) bool {
	b, err := os.ReadFile(filepath.Join(dir, "state.json"))
	return err == nil && strings.Contains(string(b), "planted")
}

func TestSandboxNeverDeletesAnUnmarkedState(t *testing.T) {
	dir := seedDir(t)
	cfg := filepath.Join(dir, "ohmytalos.yaml")
	real := filepath.Join(dir, "real-state")
	plantState(t, real)
	os.MkdirAll(filepath.Join(real, "secrets"), 0o700)
	os.WriteFile(filepath.Join(real, "secrets", "talos.age"), []byte("age"), 0o600)
	_, err := run(t, "plan", "--sandbox", "--config", cfg, "--state-dir", real)
	if err == nil {
		t.Fatal("--sandbox accepted a real state directory")
	}
	for _, want := range []string{real, "not marked as a sandbox state", "drop --state-dir"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %q: %v", want, err)
		}
	}
	if !planted(real) {
		t.Error("the real state was deleted")
	}
	if _, err := os.Stat(filepath.Join(real, "secrets", "talos.age")); err != nil {
		t.Errorf("the real secrets were deleted: %v", err)
	}
	other := filepath.Join(dir, "notes")
	os.MkdirAll(other, 0o700)
	os.WriteFile(filepath.Join(other, "todo.txt"), []byte("x"), 0o600)
	if _, err := run(t, "plan", "--sandbox", "--config", cfg, "--state-dir", other); err == nil {
		t.Error("--sandbox accepted a folder of other files")
	}
}

func TestSandboxResetsOnlyMarkedStates(t *testing.T) {
	dir := seedDir(t)
	cfg := filepath.Join(dir, "ohmytalos.yaml")
	cases := map[string]string{
		"own state dir": filepath.Join(dir, "sb"),
		"default dir":   filepath.Join(dir, ".ohmytalos", "sandbox", "demo"),
	}
	for name, sdir := range cases {
		t.Run(name, func(t *testing.T) {
			args := []string{"plan", "--sandbox", "--config", cfg}
			if name == "own state dir" {
				args = append(args, "--state-dir", sdir)
			}
			if out, err := run(t, args...); err != nil {
				t.Fatalf("first sandbox run: %v\n%s", err, out)
			}
			if _, err := os.Stat(filepath.Join(sdir, sandboxMarker)); err != nil {
				t.Fatalf("sandbox state not marked: %v", err)
			}
			if name == "default dir" {
				// States written before the marker existed live here.
				os.Remove(filepath.Join(sdir, sandboxMarker))
			}
			plantState(t, sdir)
			if out, err := run(t, args...); err != nil {
				t.Fatalf("second sandbox run: %v\n%s", err, out)
			}
			if planted(sdir) {
				t.Error("a marked sandbox state was not reset")
			}
		})
	}
}
