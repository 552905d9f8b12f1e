package state

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"
)

// ErrSecretExists is returned when a secret that must be created only once
// (the Talos secrets bundle, the disk passphrase) is already on disk.
var ErrSecretExists = errors.New("secret already exists")

// backupSuffix starts the name of a replaced secret's backup:
// NAME.age.bak-20260101T120000Z (NAME.age.bak-20260101T120000Z-001 for a
// second one within that second).
const backupSuffix = ".bak-"

// adoptSecretFiles records every secrets/NAME.age on disk that the state
// does not list, so a state rebuilt after state.json was lost or restored
// from an older copy still finds the cluster's root of trust (and never
// creates a new bundle over it).
func adoptSecretFiles(dir string, st *State) {
	matches, _ := filepath.Glob(filepath.Join(dir, "secrets", "*.age"))
	for _, m := range matches {
		name := strings.TrimSuffix(filepath.Base(m), ".age")
		if _, ok := st.Secrets[name]; !ok && name != "" {
			st.Secrets[name] = filepath.Join("secrets", name+".age")
		}
	}
}

// CreateSecret stores a secret that must never be replaced: it fails with
// ErrSecretExists when secrets/NAME.age exists, whatever the state says.
func (s *Store) CreateSecret(name string, plaintext []byte) error {
	path := s.SecretPath(name)
	if _, err := os.Lstat(path); err == nil {
		return fmt.Errorf("%w: %s is on disk; ohmytalos never replaces it: it is the cluster's root of trust", ErrSecretExists, path)
	}
	return s.putSecret(name, plaintext, false)
}

// PutSecret encrypts plaintext and stores it as secrets/NAME.age. An
// existing file with other content is first kept as a timestamped backup
// (NAME.age.bak-YYYYMMDDTHHMMSSZ, mode 0600; the newest keepBackups are
// kept); one that decrypts to the same plaintext is left as it is, byte for
// byte, and no backup is written. The comparison is in memory: the old
// plaintext is never written anywhere.
func (s *Store) PutSecret(name string, plaintext []byte) error {
	return s.putSecret(name, plaintext, true)
}

func (s *Store) putSecret(name string, plaintext []byte, replace bool) error {
	s.observed(name, plaintext)
	keys, err := s.keyringFor(true)
	if err != nil {
		return err
	}
	dir := filepath.Join(s.dir, "secrets")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("create %s: %w", dir, err)
	}
	rel := filepath.Join("secrets", name+".age")
	path := filepath.Join(s.dir, rel)
	if replace {
		same, err := s.backupSecret(keys, path, plaintext)
		if err != nil {
			return err
		}
		if same {
			return s.Update(func(st *State) error { st.Secrets[name] = rel; return nil })
		}
	}
	ct, err := keys.Encrypt(plaintext)
	if err != nil {
		return err
	}
	if err := writeAtomic(path, ct, nil); err != nil {
		return err
	}
	return s.Update(func(st *State) error { st.Secrets[name] = rel; return nil })
}

// backupSecret copies an existing secret file aside before it is replaced;
// same is true when it already holds plaintext (nothing to replace).
func (s *Store) backupSecret(keys *Keyring, path string, plaintext []byte) (same bool, err error) {
	old, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("read %s before replacing it: %w", path, err)
	}
	if pt, err := keys.Decrypt(old); err == nil && bytes.Equal(pt, plaintext) {
		return true, nil
	}
	if _, err := backupFile(path, old); err != nil {
		return false, err
	}
	return false, nil
}

// backupStamp is the layout of a backup's timestamp (UTC, to the second).
const backupStamp = "20060102T150405Z"

// keepBackups is how many backups of one secret are kept: writing a
// backup removes the older ones past it.
const keepBackups = 3

// backupFile writes data to PATH.bak-TIMESTAMP (mode 0600, never over an
// existing file), removes the backups of PATH older than the newest
// keepBackups, and returns the new backup's path.
func backupFile(path string, data []byte) (string, error) {
	return backupFileAt(path, data, time.Now())
}

// backupFileAt is backupFile at the time now. The new backup's name sorts
// after every backup of path on disk, so that the order of the names is
// the order they were written in, as strings and as pruneBackups reads
// them: PATH.bak-TIMESTAMP, then a counter of three digits for more
// within that second (PATH.bak-TIMESTAMP-001, -002, ...). A backup on disk
// from a later second than now (the clock was set back) is followed with
// its own timestamp and the next counter.
func backupFileAt(path string, data []byte, now time.Time) (string, error) {
	baks, err := listBackups(path)
	if err != nil {
		return "", err
	}
	at, n := now.UTC().Truncate(time.Second), 0
	if len(baks) > 0 {
		if last := baks[len(baks)-1]; !last.at.Before(at) {
			at, n = last.at, last.n+1
		}
	}
	for ; ; n++ {
		bak := path + backupSuffix + at.Format(backupStamp)
		if n > 0 {
			bak += fmt.Sprintf("-%03d", n)
		}
		f, err := os.OpenFile(bak, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		if errors.Is(err, os.ErrExist) {
			continue
		}
		if err != nil {
			return "", fmt.Errorf("back up %s: %w", path, err)
		}
		_, werr := io.Copy(f, bytes.NewReader(data))
		serr := f.Sync()
		cerr := f.Close()
		if err := errors.Join(werr, serr, cerr); err != nil {
			return "", fmt.Errorf("back up %s to %s: %w", path, bak, err)
		}
		return bak, pruneBackups(path)
	}
}

// secretBackup is one backup of a secret file: when it was written, and
// its counter within that second.
type secretBackup struct {
	path string
	at   time.Time
	n    int
}

// listBackups lists the backups of path, oldest first. They are ordered
// by the timestamp and counter in their names, read as numbers (so an
// older release's PATH.bak-TIMESTAMP-10 comes after its -9); a file whose
// name does not parse as a backup is not listed.
func listBackups(path string) ([]secretBackup, error) {
	dir, base := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("list the backups of %s: %w", path, err)
	}
	prefix := base + backupSuffix
	var baks []secretBackup
	for _, e := range entries {
		rest, ok := strings.CutPrefix(e.Name(), prefix)
		if !ok || !e.Type().IsRegular() {
			continue
		}
		if b, ok := parseSecretBackup(rest); ok {
			b.path = filepath.Join(dir, e.Name())
			baks = append(baks, b)
		}
	}
	sort.Slice(baks, func(i, j int) bool {
		if !baks[i].at.Equal(baks[j].at) {
			return baks[i].at.Before(baks[j].at)
		}
		return baks[i].n < baks[j].n
	})
	return baks, nil
}

// pruneBackups removes the backups of path older than the newest
// keepBackups (listBackups' order); a file that is no backup is never
// touched.
func pruneBackups(path string) error {
	baks, err := listBackups(path)
	if err != nil || len(baks) <= keepBackups {
		return err
	}
	for _, b := range baks[:len(baks)-keepBackups] {
		if err := os.Remove(b.path); err != nil && !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("remove the old backup %s (ohmytalos keeps the newest %d of each secret): %w", b.path, keepBackups, err)
		}
	}
	return nil
}

// parseSecretBackup reads TIMESTAMP or TIMESTAMP-N, the part of a backup's
// name after ".bak-".
func parseSecretBackup(s string) (secretBackup, bool) {
	stamp, counter, hasCounter := strings.Cut(s, "-")
	at, err := time.Parse(backupStamp, stamp)
	if err != nil {
		return secretBackup{}, false
	}
	b := secretBackup{at: at}
	if hasCounter {
		n, err := strconv.Atoi(counter)
		if err != nil || n < 1 {
			return secretBackup{}, false
		}
		b.n = n
	}
	return b, true
}

// RetireSecret moves secrets/NAME.age aside as a timestamped backup and
// forgets it (destroy retires the talosconfig and kubeconfig of servers
// that no longer exist). A missing file is not an error.
func (s *Store) RetireSecret(name string) error {
	path := s.SecretPath(name)
	old, err := os.ReadFile(path)
	switch {
	case errors.Is(err, os.ErrNotExist):
	case err != nil:
		return fmt.Errorf("read %s: %w", path, err)
	default:
		if _, err := backupFile(path, old); err != nil {
			return err
		}
		if err := os.Remove(path); err != nil {
			return fmt.Errorf("remove %s after backing it up: %w", path, err)
		}
	}
	return s.Update(func(st *State) error { delete(st.Secrets, name); return nil })
}
