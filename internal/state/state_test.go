package state

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func testKeys(t *testing.T) *Keyring {
	t.Helper()
	k, err := LoadKeyring(nil, filepath.Join(t.TempDir(), "age-key.txt"))
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func TestPersistAndReload(t *testing.T) {
	dir := t.TempDir()
	s, err := Open(dir, "demo", nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.PutResource("network", Resource{Kind: "network", ID: 42, Name: "demo"}); err != nil {
		t.Fatal(err)
	}
	if err := s.PutData("images", map[string]int{"a": 1}); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(filepath.Join(dir, "state.json"))
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("mode = %v, want 0600", fi.Mode().Perm())
	}
	s2, err := Open(dir, "demo", nil)
	if err != nil {
		t.Fatal(err)
	}
	r, ok := s2.Resource("network")
	if !ok || r.ID != 42 {
		t.Errorf("resource = %+v %v", r, ok)
	}
	var m map[string]int
	if found, err := s2.GetData("images", &m); !found || err != nil || m["a"] != 1 {
		t.Errorf("data = %v %v %v", m, found, err)
	}
	if _, err := Open(dir, "other", nil); err == nil || !strings.Contains(err.Error(), "belongs to cluster") {
		t.Errorf("wrong cluster err = %v", err)
	}
}

func TestInterruptedWriteKeepsOldState(t *testing.T) {
	dir := t.TempDir()
	s, _ := Open(dir, "demo", nil)
	if err := s.PutResource("a", Resource{Kind: "x", ID: 1}); err != nil {
		t.Fatal(err)
	}
	crash := errors.New("crash between temp and rename")
	s.beforeRename = func() error { return crash }
	if err := s.PutResource("b", Resource{Kind: "x", ID: 2}); !errors.Is(err, crash) {
		t.Fatalf("err = %v", err)
	}
	if _, ok := s.Resource("b"); ok {
		t.Error("in-memory state took a write that never reached disk")
	}
	s2, err := Open(dir, "demo", nil)
	if err != nil {
		t.Fatalf("old state unreadable after interrupted write: %v", err)
	}
	if _, ok := s2.Resource("a"); !ok {
		t.Error("old state lost")
	}
	if _, ok := s2.Resource("b"); ok {
		t.Error("half-written state visible")
	}
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		if strings.Contains(e.Name(), ".tmp-") {
			t.Errorf("temp file left behind: %s", e.Name())
		}
	}
}

func TestCorruptAndNewerSchema(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "state.json"), []byte("{nope"), 0o600)
	if _, err := Open(dir, "demo", nil); err == nil || !strings.Contains(err.Error(), "corrupt") {
		t.Errorf("corrupt err = %v", err)
	}
	os.WriteFile(filepath.Join(dir, "state.json"), []byte(`{"schema": 99, "cluster": "demo"}`), 0o600)
	_, err := Open(dir, "demo", nil)
	if !errors.Is(err, ErrNewerSchema) || !strings.Contains(err.Error(), "upgrade ohmytalos") {
		t.Errorf("newer schema err = %v", err)
	}
}

func TestLock(t *testing.T) {
	dir := t.TempDir()
	a, _ := Open(dir, "demo", nil)
	b, _ := Open(dir, "demo", nil)
	if err := a.Lock("ohmytalos apply"); err != nil {
		t.Fatal(err)
	}
	err := b.Lock("ohmytalos apply")
	if !errors.Is(err, ErrLocked) || !strings.Contains(err.Error(), "pid") {
		t.Fatalf("second lock err = %v", err)
	}
	if err := a.Unlock(); err != nil {
		t.Fatal(err)
	}
	if err := b.Lock("ohmytalos apply"); err != nil {
		t.Fatalf("lock after unlock: %v", err)
	}
	b.Unlock()
}

func TestSecretRoundTrip(t *testing.T) {
	dir := t.TempDir()
	k := testKeys(t)
	s, _ := Open(dir, "demo", k)
	secret := []byte("cluster:\n  secret: very-secret-value\n")
	if err := s.PutSecret("talos-secrets", secret); err != nil {
		t.Fatal(err)
	}
	raw, _ := os.ReadFile(s.SecretPath("talos-secrets"))
	if strings.Contains(string(raw), "very-secret-value") || !strings.HasPrefix(string(raw), "-----BEGIN AGE ENCRYPTED FILE-----") {
		t.Fatalf("secret not encrypted as an armored age file: %q", raw[:40])
	}
	st, _ := os.ReadFile(filepath.Join(dir, "state.json"))
	if strings.Contains(string(st), "very-secret-value") {
		t.Fatal("secret value in state.json")
	}
	s2, _ := Open(dir, "demo", k)
	got, err := s2.Secret("talos-secrets")
	if err != nil || string(got) != string(secret) {
		t.Fatalf("round trip = %q, %v", got, err)
	}
	other := testKeys(t)
	s3, _ := Open(dir, "demo", other)
	if _, err := s3.Secret("talos-secrets"); err == nil {
		t.Error("decrypted with another identity")
	}
	if _, err := s2.Secret("kubeconfig"); err == nil || !strings.Contains(err.Error(), "ohmytalos apply") {
		t.Errorf("missing secret err = %v", err)
	}
}

func TestKeyringReusesExistingIdentity(t *testing.T) {
	tmp := t.TempDir()
	first := testKeys(t)
	existing := filepath.Join(tmp, "keys.txt")
	b, _ := os.ReadFile(first.Path)
	os.WriteFile(existing, b, 0o600)
	k, err := LoadKeyring([]string{filepath.Join(tmp, "missing"), existing}, filepath.Join(tmp, "new.txt"))
	if err != nil {
		t.Fatal(err)
	}
	if k.Created || k.Path != existing || k.Recipient() != first.Recipient() {
		t.Errorf("did not reuse: %+v", k)
	}
	if _, err := os.Stat(filepath.Join(tmp, "new.txt")); err == nil {
		t.Error("created a new identity despite an existing one")
	}
	nk, err := LoadKeyring(nil, filepath.Join(tmp, "sub", "new.txt"))
	if err != nil || !nk.Created {
		t.Fatal(err)
	}
	fi, _ := os.Stat(nk.Path)
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("new key mode = %v", fi.Mode().Perm())
	}
	os.WriteFile(filepath.Join(tmp, "bad.txt"), []byte("hello"), 0o600)
	if _, err := LoadKeyring([]string{filepath.Join(tmp, "bad.txt")}, ""); err == nil {
		t.Error("bad identity file accepted")
	}
}

func TestKeyFileCandidatesIncludeOwnIdentity(t *testing.T) {
	t.Setenv("OHMYTALOS_AGE_KEY_FILE", "")
	t.Setenv("SOPS_AGE_KEY_FILE", "")
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	first, err := LoadKeyring(KeyFileCandidates(), DefaultNewKeyFile())
	if err != nil || !first.Created {
		t.Fatalf("first = %+v, %v", first, err)
	}
	again, err := LoadKeyring(KeyFileCandidates(), DefaultNewKeyFile())
	if err != nil {
		t.Fatalf("second run could not reuse the identity it created: %v", err)
	}
	if again.Created || again.Recipient() != first.Recipient() {
		t.Errorf("second run = %+v", again)
	}
}

// TestLockRereadsTheState is issue 21 item 10: a run that opens the state
// while another holds the lock, then locks once the other has written and
// unlocked, sees that write and does not write the old state back.
func TestLockRereadsTheState(t *testing.T) {
	dir := t.TempDir()
	first, err := Open(dir, "demo", nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := first.Lock("first"); err != nil {
		t.Fatal(err)
	}
	second, err := Open(dir, "demo", nil) // opened while first holds the lock
	if err != nil {
		t.Fatal(err)
	}
	if err := first.PutResource("server/a", Resource{Kind: "server", ID: 1}); err != nil {
		t.Fatal(err)
	}
	if err := first.Unlock(); err != nil {
		t.Fatal(err)
	}
	if err := second.Lock("second"); err != nil {
		t.Fatal(err)
	}
	defer second.Unlock()
	if r, ok := second.Resource("server/a"); !ok || r.ID != 1 {
		t.Fatalf("second run does not see the first's write after locking: %+v %v", r, ok)
	}
	if err := second.PutResource("server/b", Resource{Kind: "server", ID: 2}); err != nil {
		t.Fatal(err)
	}
	again, err := Open(dir, "demo", nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := again.Resource("server/a"); !ok {
		t.Error("the second run wrote the old state back: the first run's server/a is lost")
	}
}
