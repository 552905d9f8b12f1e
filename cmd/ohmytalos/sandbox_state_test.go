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

// TestSandboxMarkerCoversOnlyItsOwnFolder is issue 30's "--sandbox can
// still delete a real state": a sandbox run with --state-dir D marks D
// alone; a real state made inside D afterwards (its state.json and
// secrets, or its secrets alone) stops the next sandbox run, which names
// it and deletes nothing.
func TestSandboxMarkerCoversOnlyItsOwnFolder(t *testing.T) {
	dir, cfg := seedConfig(t)
	d := filepath.Join(dir, "clusters")
	if out, err := run(t, "plan", "--sandbox", "--config", cfg, "--state-dir", d); err != nil {
		t.Fatalf("first sandbox run: %v\n%s", err, out)
	}
	var markers []string
	filepath.WalkDir(dir, func(p string, e os.DirEntry, err error) error {
		if err == nil && e.Name() == sandboxMarker {
			markers = append(markers, p)
		}
		return nil
	})
	if len(markers) != 1 || markers[0] != filepath.Join(d, sandboxMarker) {
		t.Fatalf("markers = %v, want only %s", markers, filepath.Join(d, sandboxMarker))
	}
	for name, plant := range map[string]func(string){
		"state and secrets": func(p string) {
			plantState(t, p)
			writeFile(t, filepath.Join(p, "secrets", "talos-secrets.age"), "age")
		},
		"secrets only": func(p string) { writeFile(t, filepath.Join(p, "secrets", "talos-secrets.age"), "age") },
	} {
		t.Run(name, func(t *testing.T) {
			prod := filepath.Join(d, "prod")
			plant(prod)
			defer os.RemoveAll(prod)
			_, err := run(t, "plan", "--sandbox", "--config", cfg, "--state-dir", d)
			if err == nil {
				t.Fatal("--sandbox deleted a folder holding a real cluster state")
			}
			mustContain(t, "refusal", err.Error(), "holds the cluster state "+prod, "will not delete "+d, "move "+prod+" out of "+d)
			if _, err := os.Stat(filepath.Join(prod, "secrets", "talos-secrets.age")); err != nil {
				t.Errorf("the real secrets were deleted: %v", err)
			}
			if name == "state and secrets" && !planted(prod) {
				t.Error("the real state was deleted")
			}
		})
	}
	// With the real state gone, the sandbox's folder is reset again.
	plantState(t, d)
	if out, err := run(t, "plan", "--sandbox", "--config", cfg, "--state-dir", d); err != nil {
		t.Fatalf("sandbox run after the real state moved out: %v\n%s", err, out)
	}
	if planted(d) {
		t.Error("the sandbox's own state was not reset")
	}
}

// TestSandboxRefusesAFolderInsideKeptSecrets: a real state whose
// state.json was lost keeps its secrets folder (the bundle and the
// cluster ID); a sandbox state inside that folder is never deleted,
// marked or not.
func TestSandboxRefusesAFolderInsideKeptSecrets(t *testing.T) {
	dir, cfg := seedConfig(t)
	real := filepath.Join(dir, "real")
	writeFile(t, filepath.Join(real, "secrets", "talos-secrets.age"), "age")
	writeFile(t, filepath.Join(real, "secrets", "cluster-id"), strings.Repeat("a", 32)+"\n")
	sb := filepath.Join(real, "secrets", "sb")
	writeFile(t, filepath.Join(sb, sandboxMarker), "x")
	writeFile(t, filepath.Join(sb, "notes"), "x")
	_, err := run(t, "plan", "--sandbox", "--config", cfg, "--state-dir", sb)
	if err == nil || !strings.Contains(err.Error(), "inside the cluster state "+real) {
		t.Errorf("--sandbox reset a folder inside a real state's secrets: %v", err)
	}
	if _, err := os.Stat(filepath.Join(sb, "notes")); err != nil {
		t.Errorf("the folder was deleted: %v", err)
	}
}

// TestRealRunRefusesTheSandboxsFolder: a run without --sandbox never
// writes its state into a folder marked as the sandbox's, which the next
// --sandbox run would delete.
func TestRealRunRefusesTheSandboxsFolder(t *testing.T) {
	dir, cfg := seedConfig(t)
	d := filepath.Join(dir, "clusters")
	if out, err := run(t, "plan", "--sandbox", "--config", cfg, "--state-dir", d); err != nil {
		t.Fatalf("sandbox run: %v\n%s", err, out)
	}
	_, err := run(t, "apply", "--config", cfg, "--state-dir", d)
	if err == nil {
		t.Fatal("a real apply used the sandbox's state folder")
	}
	mustContain(t, "refusal", err.Error(), "state folder "+d+" is the in-process sandbox's", sandboxMarker, "pass --state-dir with another folder")
	if state.Exists(d) {
		t.Error("the real run wrote a state into the sandbox's folder")
	}
}

// writeFile writes body to p, making its folders (mode 0700).
func writeFile(t *testing.T, p, body string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
}
