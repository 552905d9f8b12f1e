package state

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// ErrSecretExists is returned when a secret that must be created only once
// (the Talos secrets bundle, the disk passphrase) is already on disk.
var ErrSecretExists = errors.New("secret already exists")

// backupSuffix starts the name of a replaced secret's backup:
// NAME.age.bak-20260101T120000Z.
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
// (NAME.age.bak-YYYYMMDDTHHMMSSZ, mode 0600); one with the same content is
// left as it is, byte for byte.
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

// backupFile writes data to PATH.bak-TIMESTAMP (mode 0600, never over an
// existing file) and returns that path.
func backupFile(path string, data []byte) (string, error) {
	stamp := time.Now().UTC().Format("20060102T150405Z")
	bak := path + backupSuffix + stamp
	for i := 1; ; i++ {
		f, err := os.OpenFile(bak, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		if errors.Is(err, os.ErrExist) {
			bak = fmt.Sprintf("%s%s%s-%d", path, backupSuffix, stamp, i)
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
		return bak, nil
	}
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
