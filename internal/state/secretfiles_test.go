package state

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"testing"
)

func TestSecretsAreNeverOverwritten(t *testing.T) {
	dir := t.TempDir()
	s, err := Open(dir, "demo", testKeys(t))
	if err != nil {
		t.Fatal(err)
	}
	if err := s.CreateSecret("talos-secrets", []byte("bundle-1")); err != nil {
		t.Fatal(err)
	}
	first, _ := os.ReadFile(s.SecretPath("talos-secrets"))
	if err := s.CreateSecret("talos-secrets", []byte("bundle-2")); !errors.Is(err, ErrSecretExists) {
		t.Fatalf("second create: %v, want ErrSecretExists", err)
	}
	if now, _ := os.ReadFile(s.SecretPath("talos-secrets")); !bytes.Equal(now, first) {
		t.Fatal("bundle bytes changed")
	}
	// Replacing keeps a timestamped backup, mode 0600; the same content
	// again leaves the file untouched.
	if err := s.PutSecret("kubeconfig", []byte("kc-1")); err != nil {
		t.Fatal(err)
	}
	kc1, _ := os.ReadFile(s.SecretPath("kubeconfig"))
	if err := s.PutSecret("kubeconfig", []byte("kc-1")); err != nil {
		t.Fatal(err)
	}
	if now, _ := os.ReadFile(s.SecretPath("kubeconfig")); !bytes.Equal(now, kc1) {
		t.Error("same content rewritten")
	}
	if err := s.PutSecret("kubeconfig", []byte("kc-2")); err != nil {
		t.Fatal(err)
	}
	baks, _ := filepath.Glob(s.SecretPath("kubeconfig") + ".bak-*")
	if len(baks) != 1 {
		t.Fatalf("backups = %v, want one", baks)
	}
	if b, _ := os.ReadFile(baks[0]); !bytes.Equal(b, kc1) {
		t.Error("backup is not the old file")
	}
	if fi, _ := os.Stat(baks[0]); fi.Mode().Perm() != 0o600 {
		t.Errorf("backup mode %v", fi.Mode().Perm())
	}
	if got, _ := s.Secret("kubeconfig"); string(got) != "kc-2" {
		t.Errorf("kubeconfig = %q", got)
	}
}

func TestLostStateFindsKeptSecrets(t *testing.T) {
	dir := t.TempDir()
	keys := testKeys(t)
	s, _ := Open(dir, "demo", keys)
	if err := s.CreateSecret("talos-secrets", []byte("bundle")); err != nil {
		t.Fatal(err)
	}
	if err := s.PutResource("network", Resource{Kind: "network", ID: 7}); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(dir, "state.json")); err != nil {
		t.Fatal(err)
	}
	again, err := Open(dir, "demo", keys)
	if err != nil {
		t.Fatal(err)
	}
	if !again.HasSecret("talos-secrets") {
		t.Fatal("the kept bundle is not found after state.json was lost")
	}
	if b, err := again.Secret("talos-secrets"); err != nil || string(b) != "bundle" {
		t.Errorf("bundle = %q, %v", b, err)
	}
	// The previous write is kept as state.json.bak.
	bak, err := os.ReadFile(filepath.Join(dir, "state.json.bak"))
	if err != nil || !bytes.Contains(bak, []byte(`"secrets"`)) {
		t.Errorf("state.json.bak = %s, %v", bak, err)
	}
}

func TestRetireSecretKeepsABackup(t *testing.T) {
	dir := t.TempDir()
	s, _ := Open(dir, "demo", testKeys(t))
	if err := s.PutSecret("talosconfig", []byte("tc")); err != nil {
		t.Fatal(err)
	}
	if err := s.RetireSecret("talosconfig"); err != nil {
		t.Fatal(err)
	}
	if s.HasSecret("talosconfig") {
		t.Error("retired secret still listed")
	}
	if baks, _ := filepath.Glob(s.SecretPath("talosconfig") + ".bak-*"); len(baks) != 1 {
		t.Errorf("backups = %v", baks)
	}
	if again, _ := Open(dir, "demo", nil); again.HasSecret("talosconfig") {
		t.Error("a retired secret is adopted again")
	}
}
