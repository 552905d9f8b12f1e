package state

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"filippo.io/age"
)

// TestEveryIdentityInAKeyFileIsTried: the cluster's secrets were
// encrypted to an identity that is not the first of the operator's SOPS
// key file (SOPS tries them all); they still open.
func TestEveryIdentityInAKeyFileIsTried(t *testing.T) {
	tmp := t.TempDir()
	clusterKey := filepath.Join(tmp, "cluster.txt")
	k, err := LoadKeyring(nil, clusterKey)
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(tmp, "state")
	s, _ := Open(dir, "demo", k)
	if err := s.PutSecret("talosconfig", []byte("tc")); err != nil {
		t.Fatal(err)
	}
	other, err := age.GenerateX25519Identity()
	if err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(clusterKey)
	sops := filepath.Join(tmp, "keys.txt")
	if err := os.WriteFile(sops, []byte("# another project\n"+other.String()+"\n"+string(b)), 0o600); err != nil {
		t.Fatal(err)
	}
	found, err := FindKeyring([]string{sops})
	if err != nil {
		t.Fatal(err)
	}
	again, _ := Open(dir, "demo", found)
	if got, err := again.Secret("talosconfig"); err != nil || string(got) != "tc" {
		t.Fatalf("secret with the second identity of the key file: %q, %v", got, err)
	}
	// And across key files: the identity in a later candidate opens it.
	first := filepath.Join(tmp, "first.txt")
	if err := os.WriteFile(first, []byte(other.String()+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	both, err := FindKeyring([]string{first, clusterKey})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := both.Decrypt(mustRead(t, s.SecretPath("talosconfig"))); err != nil {
		t.Errorf("identity of the second key file not tried: %v", err)
	}
}

func mustRead(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestReadingCreatesNoIdentity: a read with no identity anywhere says
// where it looked and creates nothing; only a write creates one.
func TestReadingCreatesNoIdentity(t *testing.T) {
	tmp := t.TempDir()
	newKey := filepath.Join(tmp, "new", "age-key.txt")
	candidates := []string{filepath.Join(tmp, "sops", "keys.txt"), newKey}
	if _, err := FindKeyring(candidates); !errors.Is(err, ErrNoIdentity) || !strings.Contains(err.Error(), candidates[0]) {
		t.Fatalf("FindKeyring = %v, want ErrNoIdentity naming %s", err, candidates[0])
	}
	dir := filepath.Join(tmp, "state")
	if err := os.MkdirAll(filepath.Join(dir, "secrets"), 0o700); err != nil {
		t.Fatal(err)
	}
	// A secret on disk, encrypted to an identity this HOME does not have.
	k, _ := LoadKeyring(nil, filepath.Join(tmp, "elsewhere.txt"))
	ct, _ := k.Encrypt([]byte("kc"))
	if err := os.WriteFile(filepath.Join(dir, "secrets", "kubeconfig.age"), ct, 0o600); err != nil {
		t.Fatal(err)
	}
	s, _ := Open(dir, "demo", nil)
	s.SetKeyLoader(func() (*Keyring, error) { return LoadKeyring(candidates, newKey) })
	s.SetKeyFinder(func() (*Keyring, error) { return FindKeyring(candidates) })
	if _, err := s.Secret("kubeconfig"); !errors.Is(err, ErrNoIdentity) {
		t.Errorf("read without identity: %v, want ErrNoIdentity", err)
	}
	if _, err := s.Recipient(); !errors.Is(err, ErrNoIdentity) {
		t.Errorf("recipient without identity: %v", err)
	}
	if _, err := os.Stat(newKey); err == nil {
		t.Fatal("a read created an identity")
	}
	if err := s.PutSecret("talosconfig", []byte("tc")); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(newKey); err != nil {
		t.Errorf("a write did not create the identity: %v", err)
	}
}
