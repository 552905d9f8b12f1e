package main

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"filippo.io/age"

	"github.com/ohmytalos/ohmytalos/internal/etcdbackup"
	"github.com/ohmytalos/ohmytalos/internal/spec"
	"github.com/ohmytalos/ohmytalos/internal/state"
)

// TestEtcdSnapshotAgainstTheSandbox applies the seed spec against a
// standalone sandbox (as "sandbox serve" would run it), then takes an
// encrypted snapshot: the file opens with the state's identity and with an
// extra --recipient's, holds no plaintext, is mode 0600, is not replaced
// without --force, and is recorded in the state.
func TestEtcdSnapshotAgainstTheSandbox(t *testing.T) {
	dir, cfg := sandboxSeed(t)
	// Scheduled backups on too: the control planes' Talos serves the
	// talos.dev ServiceAccount kind only because the machine config turns
	// on kubernetesTalosAPIAccess, as real Talos does.
	withBackup := mustRead(t, cfg) + `addons:
  backup:
    enabled: true
    bucket: etcd-backups
    accessKeyID: {provider: env, ref: TEST_S3_KEY_ID}
    secretAccessKey: {provider: env, ref: TEST_S3_SECRET}
`
	if err := os.WriteFile(cfg, []byte(withBackup), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("TEST_S3_KEY_ID", "key-id-value")
	t.Setenv("TEST_S3_SECRET", "s3-secret-value")
	if out, err := run(t, "apply", "--config", cfg); err != nil {
		t.Fatalf("apply: %v\n%s", err, out)
	}
	if out, _ := run(t, "doctor", "--config", cfg, "--check", "etcd"); !strings.Contains(out, "talos-backup") || strings.Contains(out, "s3-secret-value") {
		t.Errorf("doctor etcd does not report the scheduled backup (or leaks the S3 secret):\n%s", out)
	}
	extra, err := age.GenerateX25519Identity()
	if err != nil {
		t.Fatal(err)
	}
	snap := filepath.Join(dir, "etcd.snapshot.age")
	out, err := run(t, "etcd", "snapshot", "--config", cfg, "--out", snap, "--recipient", extra.Recipient().String())
	if err != nil || !strings.Contains(out, "encrypted to 2 recipient(s)") {
		t.Fatalf("etcd snapshot: %v\n%s", err, out)
	}
	ct, err := os.ReadFile(snap)
	if err != nil {
		t.Fatal(err)
	}
	if fi, _ := os.Stat(snap); fi.Mode().Perm() != 0o600 {
		t.Errorf("snapshot mode %v, want 0600", fi.Mode().Perm())
	}
	if bytes.Contains(ct, []byte("members")) || bytes.Contains(ct, []byte("demo-cp")) {
		t.Error("the snapshot file holds plaintext")
	}
	keys, err := state.LoadKeyring(state.KeyFileCandidates(), state.DefaultNewKeyFile())
	if err != nil {
		t.Fatal(err)
	}
	own, err := age.ParseIdentities(strings.NewReader(mustRead(t, keys.Path)))
	if err != nil {
		t.Fatal(err)
	}
	for name, ids := range map[string][]age.Identity{"state identity": own, "--recipient": {extra}} {
		plain, err := etcdbackup.Decrypt(ct, ids...)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		// An etcd snapshot: bbolt magic in the first meta page, the member list inside.
		if len(plain) < 4096 || !bytes.Contains(plain, []byte("demo-cp-1")) {
			t.Errorf("%s: decrypted snapshot (%d bytes) is not the cluster's etcd", name, len(plain))
		}
	}
	if _, err := run(t, "etcd", "snapshot", "--config", cfg, "--out", snap); err == nil || !strings.Contains(err.Error(), "--force") {
		t.Errorf("existing file replaced without --force: %v", err)
	}
	if _, err := run(t, "etcd", "snapshot", "--config", cfg, "--out", snap, "--force"); err != nil {
		t.Errorf("--force: %v", err)
	}
	st, err := state.Open(filepath.Join(dir, ".ohmytalos", "demo"), "demo", nil)
	if err != nil {
		t.Fatal(err)
	}
	rec, ok, err := etcdbackup.Last(st)
	if err != nil || !ok || rec.File != snap || rec.Size < 4096 || len(rec.Recipients) != 1 {
		t.Errorf("recorded snapshot = %+v, %v, %v", rec, ok, err)
	}
}

func TestEtcdSnapshotRefusesABadRecipient(t *testing.T) {
	dir := seedDir(t)
	_, err := run(t, "etcd", "snapshot", "--config", filepath.Join(dir, "ohmytalos.yaml"), "--out", filepath.Join(dir, "x"), "--sandbox")
	if err == nil || !strings.Contains(err.Error(), "sandbox serve") {
		t.Errorf("--sandbox: %v", err)
	}
	_, _, err = etcdbackup.Recipients("", []string{"age1nope"})
	if err == nil || !strings.Contains(err.Error(), "--recipient") {
		t.Errorf("bad recipient: %v", err)
	}
}

func mustRead(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestTalosConfigWithBackup: with addons.backup on, talos-config writes the
// talos-backup manifests (S3 keys redacted with --redact, looked up without)
// and control planes that let its namespace take etcd snapshots.
func TestTalosConfigWithBackup(t *testing.T) {
	dir, cfg := seedConfig(t)
	f, err := os.OpenFile(cfg, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = f.WriteString(`addons:
  backup:
    enabled: true
    bucket: demo-etcd
    accessKeyID: {provider: env, ref: S3_ACCESS_KEY}
    secretAccessKey: {provider: env, ref: S3_SECRET_KEY}
`)
	f.Close()
	hetznerFor(t, strings.Repeat("s", 64))
	t.Setenv("S3_ACCESS_KEY", "AKIDBACKUPKEY")
	t.Setenv("S3_SECRET_KEY", "backup-secret-value")
	for _, redact := range []bool{true, false} {
		out := filepath.Join(dir, fmt.Sprintf("configs-%v", redact))
		args := []string{"talos-config", "--config", cfg, "--out", out}
		if redact {
			args = append(args, "--redact")
		}
		if o, err := run(t, args...); err != nil {
			t.Fatalf("%v\n%s", err, o)
		}
		m := mustRead(t, filepath.Join(out, "manifests", "talos-backup.yaml"))
		recipient := "value: age1"
		if redact {
			recipient = "the cluster's age recipient" // the identity is not loaded for a review copy
		}
		for _, want := range []string{"kind: CronJob", "https://nbg1.your-objectstorage.com", "os:etcd:backup", recipient} {
			if !strings.Contains(m, want) {
				t.Errorf("redact=%v: talos-backup.yaml lacks %q", redact, want)
			}
		}
		if leaked := strings.Contains(m, "backup-secret-value") || strings.Contains(m, "AKIDBACKUPKEY"); leaked == redact {
			t.Errorf("redact=%v: S3 keys in the manifest = %v", redact, leaked)
		}
		if cp := mustRead(t, filepath.Join(out, "controlplane.yaml")); !strings.Contains(cp, "kubernetesTalosAPIAccess") || !strings.Contains(cp, "kube-system") {
			t.Errorf("controlplane.yaml does not allow Talos API access for the backup")
		}
		if wk := mustRead(t, filepath.Join(out, "worker.yaml")); strings.Contains(wk, "kubernetesTalosAPIAccess") {
			t.Errorf("worker.yaml enables Talos API access (Talos refuses it on workers)")
		}
	}
	out, err := run(t, "version")
	if err != nil || !strings.Contains(out, "add-on backup "+spec.DefaultTalosBackupVersion) {
		t.Errorf("version does not list talos-backup: %v\n%s", err, out)
	}
}

func TestEtcdSnapshotTakesTheLock(t *testing.T) {
	dir := seedDir(t)
	holdLock(t, dir)
	_, err := run(t, "etcd", "snapshot", "--config", filepath.Join(dir, "ohmytalos.yaml"), "--out", filepath.Join(dir, "snap.age"))
	if !errors.Is(err, state.ErrLocked) {
		t.Errorf("etcd snapshot while locked: %v", err)
	}
}
