package state

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"
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

// TestBackupsKeepTheNewestThree: every replacement keeps a backup, but
// only the newest three of each secret stay on disk, holding the three
// most recent replaced versions; another secret's backups are not counted.
func TestBackupsKeepTheNewestThree(t *testing.T) {
	keys := testKeys(t)
	s, _ := Open(t.TempDir(), "demo", keys)
	if err := s.PutSecret("kubeconfig", []byte("kc")); err != nil {
		t.Fatal(err)
	}
	if err := s.PutSecret("kubeconfig", []byte("kc-2")); err != nil {
		t.Fatal(err)
	}
	for i := range 6 {
		if err := s.PutSecret("talosconfig", fmt.Appendf(nil, "tc-%d", i)); err != nil {
			t.Fatal(err)
		}
	}
	baks, _ := filepath.Glob(s.SecretPath("talosconfig") + ".bak-*")
	if len(baks) != keepBackups {
		t.Fatalf("talosconfig backups = %v, want the newest %d", baks, keepBackups)
	}
	var got []string
	for _, b := range baks {
		ct, _ := os.ReadFile(b)
		pt, err := keys.Decrypt(ct)
		if err != nil {
			t.Fatalf("%s: %v", b, err)
		}
		got = append(got, string(pt))
	}
	sort.Strings(got)
	if want := []string{"tc-2", "tc-3", "tc-4"}; !slices.Equal(got, want) {
		t.Errorf("backups hold %v, want %v (the newest replaced versions)", got, want)
	}
	if kc, _ := filepath.Glob(s.SecretPath("kubeconfig") + ".bak-*"); len(kc) != 1 {
		t.Errorf("kubeconfig backups = %v, want one", kc)
	}
	// The same plaintext again writes no backup, and the comparison
	// leaves no plaintext on disk.
	for range 3 {
		if err := s.PutSecret("talosconfig", []byte("tc-5")); err != nil {
			t.Fatal(err)
		}
	}
	if again, _ := filepath.Glob(s.SecretPath("talosconfig") + ".bak-*"); !slices.Equal(again, baks) {
		t.Errorf("an unchanged talosconfig changed the backups: %v, was %v", again, baks)
	}
	filepath.WalkDir(s.Dir(), func(p string, d os.DirEntry, err error) error {
		if b, _ := os.ReadFile(p); err == nil && !d.IsDir() && bytes.Contains(b, []byte("tc-")) {
			t.Errorf("%s holds a plaintext", p)
		}
		return nil
	})
}

// TestBackupNamesSortByTime: backups within one second get a counter
// whose names sort as strings in the order they were written, and pruning
// reads the timestamp and counter as numbers (an older release's "-10"
// is newer than its "-9"); files that are no backup are never removed.
func TestBackupNamesSortByTime(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "talosconfig.age")
	at := time.Date(2026, 12, 3, 13, 0, 0, 0, time.UTC)
	var written []string
	for i := range 12 {
		b, err := backupFileAt(path, fmt.Appendf(nil, "v%d", i), at)
		if err != nil {
			t.Fatal(err)
		}
		written = append(written, filepath.Base(b))
	}
	if !slices.IsSorted(written) {
		t.Errorf("backups written in this order do not sort by name: %v", written)
	}
	if want := written[len(written)-keepBackups:]; !slices.Equal(backupsOf(t, dir), want) {
		t.Errorf("kept %v, want the newest %v", backupsOf(t, dir), want)
	}
	// A clock set back an hour still names the next backup after the
	// others: it is the newest, and is kept.
	b, err := backupFileAt(path, []byte("after"), at.Add(-time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	if got := backupsOf(t, dir); got[len(got)-1] != filepath.Base(b) || len(got) != keepBackups {
		t.Errorf("after a clock set back: kept %v, want the newest %s last", got, filepath.Base(b))
	}

	// An older release's names, and files ohmytalos did not write.
	old := t.TempDir()
	path = filepath.Join(old, "talosconfig.age")
	for _, n := range []string{"20261203T130000Z", "20261203T130000Z-9", "20261203T130000Z-10",
		"20261203T125959Z-11", "mine", "20261203T130000Z-x", "20261203T130000Z.keep"} {
		if err := os.WriteFile(path+".bak-"+n, nil, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := backupFileAt(path, []byte("new"), at.Add(time.Second)); err != nil {
		t.Fatal(err)
	}
	want := []string{
		"talosconfig.age.bak-20261203T130000Z-10", "talosconfig.age.bak-20261203T130000Z-9",
		"talosconfig.age.bak-20261203T130000Z-x", "talosconfig.age.bak-20261203T130000Z.keep",
		"talosconfig.age.bak-20261203T130001Z", "talosconfig.age.bak-mine",
	}
	if got := backupsOf(t, old); !slices.Equal(got, want) {
		t.Errorf("after pruning: %v, want %v", got, want)
	}
}

// backupsOf lists the names of the .bak- files in dir, sorted.
func backupsOf(t *testing.T, dir string) []string {
	t.Helper()
	es, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range es {
		if strings.Contains(e.Name(), ".bak-") {
			out = append(out, e.Name())
		}
	}
	return out
}
