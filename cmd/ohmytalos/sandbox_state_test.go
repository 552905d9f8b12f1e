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
	dir, cfg := seedConfig(t)
	real := filepath.Join(dir, "real-state")
	plantState(t, real)
	os.MkdirAll(filepath.Join(real, "secrets"), 0o700)
	os.WriteFile(filepath.Join(real, "secrets", "talos.age"), []byte("age"), 0o600)
	_, err := run(t, "plan", "--sandbox", "--config", cfg, "--state-dir", real)
	if err == nil {
		t.Fatal("--sandbox accepted a real state directory")
	}
	mustContain(t, "error", err.Error(), real, "not marked as a sandbox state", "drop --state-dir")
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
	dir, cfg := seedConfig(t)
	cases := map[string]string{
		"own state dir": filepath.Join(dir, "sb"),
		"default dir":   filepath.Join(dir, ".ohmytalos", ".sandbox", "demo"),
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

// TestSandboxNeverDeletesARealClusterNamedSandbox plants a real cluster
// named "sandbox" (state and secrets in .ohmytalos/sandbox) and runs
// --sandbox plan with a spec named "secrets": once the sandbox's own
// folder, .ohmytalos/sandbox/secrets was that cluster's secrets folder.
func TestSandboxNeverDeletesARealClusterNamedSandbox(t *testing.T) {
	dir, cfg := seedConfig(t)
	real := filepath.Join(dir, ".ohmytalos", "sandbox")
	plantState(t, real)
	secret := filepath.Join(real, "secrets", "talos-secrets.age")
	os.MkdirAll(filepath.Dir(secret), 0o700)
	os.WriteFile(secret, []byte("age"), 0o600)
	b, _ := os.ReadFile(cfg)
	os.WriteFile(cfg, []byte(strings.Replace(string(b), "name: demo", "name: secrets", 1)), 0o644)
	if out, err := run(t, "plan", "--sandbox", "--config", cfg); err != nil {
		t.Fatalf("--sandbox plan: %v\n%s", err, out)
	}
	if _, err := os.Stat(secret); err != nil {
		t.Errorf("--sandbox deleted the real cluster's secrets: %v", err)
	}
	if !planted(real) {
		t.Error("--sandbox deleted the real cluster's state")
	}
	if _, err := os.Stat(filepath.Join(dir, ".ohmytalos", ".sandbox", "secrets", sandboxMarker)); err != nil {
		t.Errorf("the sandbox state is not under .ohmytalos/.sandbox: %v", err)
	}
}

// TestSandboxRefusesUnmarkedOrNestedStates checks the marker is required
// in the default folder too, and that a marked folder inside another
// cluster's state is never deleted.
func TestSandboxRefusesUnmarkedOrNestedStates(t *testing.T) {
	dir, cfg := seedConfig(t)
	def := filepath.Join(dir, ".ohmytalos", ".sandbox", "demo")
	plantState(t, def)
	_, err := run(t, "plan", "--sandbox", "--config", cfg)
	if err == nil || !strings.Contains(err.Error(), "not marked as a sandbox state") {
		t.Errorf("--sandbox reset an unmarked default folder: %v", err)
	}
	if !planted(def) {
		t.Error("the unmarked default folder was deleted")
	}
	outer := filepath.Join(dir, "real")
	plantState(t, outer)
	nested := filepath.Join(outer, "secrets")
	os.MkdirAll(nested, 0o700)
	os.WriteFile(filepath.Join(nested, sandboxMarker), []byte("x"), 0o600)
	os.WriteFile(filepath.Join(nested, "talos-secrets.age"), []byte("age"), 0o600)
	_, err = run(t, "plan", "--sandbox", "--config", cfg, "--state-dir", nested)
	if err == nil || !strings.Contains(err.Error(), "inside the cluster state "+outer) {
		t.Errorf("--sandbox reset a folder inside a cluster state: %v", err)
	}
	if _, err := os.Stat(filepath.Join(nested, "talos-secrets.age")); err != nil {
		t.Errorf("the nested secrets were deleted: %v", err)
	}
}
