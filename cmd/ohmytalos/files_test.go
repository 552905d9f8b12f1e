package main

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ohmytalos/ohmytalos/internal/state"
)

// TestTalosConfigWritesPrivateFilesThroughLinks checks that machine
// configs replace older, wider files with 0600 ones, write a symlink's
// target, and that the message says so.
func TestTalosConfigWritesPrivateFilesThroughLinks(t *testing.T) {
	dir, cfg := hetznerSeed(t)
	outDir := filepath.Join(dir, "configs")
	os.MkdirAll(filepath.Join(dir, "elsewhere"), 0o755)
	os.MkdirAll(outDir, 0o755)
	wide := filepath.Join(outDir, "controlplane.yaml")
	os.WriteFile(wide, []byte("old"), 0o644)
	os.Chmod(wide, 0o644)
	target := filepath.Join(dir, "elsewhere", "worker.yaml")
	os.WriteFile(target, []byte("old"), 0o644)
	os.Chmod(target, 0o644)
	os.Symlink(target, filepath.Join(outDir, "worker.yaml"))
	out, err := run(t, "talos-config", "--config", cfg, "--out", outDir, "--redact")
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	mustBePrivate(t, wide, target)
	if fi, err := os.Lstat(filepath.Join(outDir, "worker.yaml")); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Errorf("the symlink was replaced: %v", err)
	}
	if !strings.Contains(out, "-> "+target+" (mode 0600)") {
		t.Errorf("message does not name the link's target:\n%s", out)
	}
}

// mustBePrivate fails t unless every one of paths (a link: its target)
// exists with mode 0600.
func mustBePrivate(t *testing.T, paths ...string) {
	t.Helper()
	for _, p := range paths {
		fi, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		if m := fi.Mode().Perm(); m != 0o600 {
			t.Errorf("%s mode %v, want 0600", p, m)
		}
	}
}

// TestWritingCommandsTakeTheLock runs talos-config and images sweep while
// another run holds the cluster's lock: both must refuse.
func TestWritingCommandsTakeTheLock(t *testing.T) {
	dir, cfg := hetznerSeed(t)
	holdLock(t, dir)
	cases := [][]string{
		{"talos-config", "--config", cfg, "--out", filepath.Join(dir, "configs")},
		{"images", "sweep", "--config", cfg},
	}
	for _, args := range cases {
		_, err := run(t, args...)
		if !errors.Is(err, state.ErrLocked) || !strings.Contains(err.Error(), "ohmytalos apply") {
			t.Errorf("%s while locked: %v", args[0], err)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "configs")); err == nil {
		t.Error("talos-config wrote configs while another run held the lock")
	}
}

// TestKubeconfigMergeKeepsTheOperatorsEntries merges the sandbox cluster's
// kubeconfig into a symlinked config that already holds other credentials.
func TestKubeconfigMergeKeepsTheOperatorsEntries(t *testing.T) {
	dir, cfg := seedConfig(t)
	sdir := filepath.Join(dir, "sb")
	storeSecrets(t, sdir, map[string][]byte{"kubeconfig": adminKubeconfig("S0VZ")})
	target := filepath.Join(dir, "dotfiles", "kube")
	os.MkdirAll(filepath.Dir(target), 0o755)
	old := "apiVersion: v1\nkind: Config\nclusters:\n- name: demo\n  cluster: {server: https://z3k:6443}\n" +
		"users:\n- name: admin@demo\n  user: {token: keep-me}\ncontexts:\n- name: admin@demo\n  context: {cluster: demo, user: admin@demo}\ncurrent-context: admin@demo\n"
	os.WriteFile(target, []byte(old), 0o644)
	os.Chmod(target, 0o644)
	link := filepath.Join(dir, "home", ".kube", "config")
	os.MkdirAll(filepath.Dir(link), 0o700)
	os.Symlink(target, link)
	t.Setenv("KUBECONFIG", link)
	out, err := run(t, "kubeconfig", "--merge", "--config", cfg, "--state-dir", sdir)
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	b, _ := os.ReadFile(target)
	mustContain(t, "merged file", string(b), "keep-me", "https://z3k:6443", "name: admin@demo-1", "current-context: admin@demo-1")
	mustContain(t, "message", out, "backed up the previous file to "+target+".bak-", `user "admin@demo" -> "admin@demo-1"`, "-> "+target+" (mode 0600)")
	mustBePrivate(t, target)
}

// TestTalosConfigNarrowsEveryFileItWrites pre-creates the add-on manifests
// (the hcloud Secret holds the token) and the log file with mode 0644:
// after talos-config --out every one of them is 0600.
func TestTalosConfigNarrowsEveryFileItWrites(t *testing.T) {
	dir, cfg := hetznerSeed(t)
	outDir := filepath.Join(dir, "configs")
	scratch := filepath.Join(dir, "scratch")
	if out, err := run(t, "talos-config", "--config", cfg, "--out", scratch, "--redact"); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	var wide []string
	filepath.WalkDir(scratch, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			rel, _ := filepath.Rel(scratch, p)
			wide = append(wide, filepath.Join(outDir, rel))
		}
		return nil
	})
	if len(wide) < 3 {
		t.Fatalf("talos-config wrote only %v", wide)
	}
	logFile := filepath.Join(dir, "debug.log")
	wide = append(wide, logFile)
	for _, p := range wide {
		os.MkdirAll(filepath.Dir(p), 0o755)
		os.WriteFile(p, []byte("old"), 0o644)
		os.Chmod(p, 0o644)
	}
	out, err := run(t, "talos-config", "--config", cfg, "--out", outDir, "--log-file", logFile)
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	mustBePrivate(t, wide...)
	if b, _ := os.ReadFile(filepath.Join(outDir, "manifests", "hcloud-secret.yaml")); !strings.Contains(string(b), strings.Repeat("s", 64)) {
		t.Errorf("manifests/hcloud-secret.yaml does not hold the token: the test no longer covers the file that leaked it")
	}
}
