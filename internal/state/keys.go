package state

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"filippo.io/age"
	"filippo.io/age/armor"
)

// Keyring encrypts secret blobs at rest with an age X25519 identity, so the
// standard `age` CLI can decrypt them: `age -d -i KEYFILE FILE.age`.
type Keyring struct {
	identity *age.X25519Identity
	// Path is the identity file in use.
	Path string
	// Created is true when LoadKeyring had to create a new identity.
	Created bool
}

// KeyFileCandidates lists where an existing age identity is looked for, in
// order: $OHMYTALOS_AGE_KEY_FILE, $SOPS_AGE_KEY_FILE, SOPS' default key
// file ($XDG_CONFIG_HOME/sops/age/keys.txt, ~/.config/sops/age/keys.txt),
// then the one ohmytalos creates (DefaultNewKeyFile).
func KeyFileCandidates() []string {
	var out []string
	for _, v := range []string{"OHMYTALOS_AGE_KEY_FILE", "SOPS_AGE_KEY_FILE"} {
		if p := os.Getenv(v); p != "" {
			out = append(out, p)
		}
	}
	if x := os.Getenv("XDG_CONFIG_HOME"); x != "" {
		out = append(out, filepath.Join(x, "sops", "age", "keys.txt"))
	}
	if h, err := os.UserHomeDir(); err == nil {
		out = append(out, filepath.Join(h, ".config", "sops", "age", "keys.txt"))
	}
	// The identity ohmytalos created on an earlier run.
	return append(out, DefaultNewKeyFile())
}

// DefaultNewKeyFile is where a new identity is created when none exists:
// $OHMYTALOS_AGE_KEY_FILE if set, else ~/.config/ohmytalos/age-key.txt.
func DefaultNewKeyFile() string {
	if p := os.Getenv("OHMYTALOS_AGE_KEY_FILE"); p != "" {
		return p
	}
	base, err := os.UserConfigDir()
	if err != nil {
		base = "."
	}
	return filepath.Join(base, "ohmytalos", "age-key.txt")
}

// LoadKeyring reuses the first existing identity among candidates, or
// creates one (mode 0600) at newPath.
func LoadKeyring(candidates []string, newPath string) (*Keyring, error) {
	for _, p := range candidates {
		b, err := os.ReadFile(p)
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("read age identity %s: %w", p, err)
		}
		id, err := firstX25519(b)
		if err != nil {
			return nil, fmt.Errorf("age identity file %s: %w", p, err)
		}
		return &Keyring{identity: id, Path: p}, nil
	}
	id, err := age.GenerateX25519Identity()
	if err != nil {
		return nil, fmt.Errorf("generate age identity: %w", err)
	}
	if err := os.MkdirAll(filepath.Dir(newPath), 0o700); err != nil {
		return nil, fmt.Errorf("create %s: %w", filepath.Dir(newPath), err)
	}
	content := fmt.Sprintf("# created by ohmytalos: decrypts cluster secrets in .ohmytalos/*/secrets\n# public key: %s\n%s\n",
		id.Recipient(), id)
	f, err := os.OpenFile(newPath, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return nil, fmt.Errorf("create age identity %s: %w", newPath, err)
	}
	if _, err := f.WriteString(content); err != nil {
		f.Close()
		return nil, fmt.Errorf("write age identity %s: %w", newPath, err)
	}
	if err := f.Close(); err != nil {
		return nil, err
	}
	return &Keyring{identity: id, Path: newPath, Created: true}, nil
}

func firstX25519(b []byte) (*age.X25519Identity, error) {
	ids, err := age.ParseIdentities(bytes.NewReader(b))
	if err != nil {
		return nil, fmt.Errorf("not an age identity file: %w", err)
	}
	for _, id := range ids {
		if x, ok := id.(*age.X25519Identity); ok {
			return x, nil
		}
	}
	return nil, errors.New("holds no X25519 identity: expected an age secret key line, as age-keygen writes")
}

// Recipient is the public key secrets are encrypted to.
func (k *Keyring) Recipient() string { return k.identity.Recipient().String() }

// Encrypt returns an armored age file of plaintext.
func (k *Keyring) Encrypt(plaintext []byte) ([]byte, error) {
	var buf bytes.Buffer
	aw := armor.NewWriter(&buf)
	w, err := age.Encrypt(aw, k.identity.Recipient())
	if err != nil {
		return nil, fmt.Errorf("encrypt: %w", err)
	}
	if _, err := w.Write(plaintext); err != nil {
		return nil, fmt.Errorf("encrypt: %w", err)
	}
	if err := w.Close(); err != nil {
		return nil, fmt.Errorf("encrypt: %w", err)
	}
	if err := aw.Close(); err != nil {
		return nil, fmt.Errorf("encrypt: %w", err)
	}
	return buf.Bytes(), nil
}

// Decrypt opens an age file (armored or binary).
func (k *Keyring) Decrypt(ciphertext []byte) ([]byte, error) {
	var r io.Reader = bytes.NewReader(ciphertext)
	if strings.HasPrefix(string(ciphertext), "-----BEGIN AGE ENCRYPTED FILE-----") {
		r = armor.NewReader(r)
	}
	d, err := age.Decrypt(r, k.identity)
	if err != nil {
		return nil, fmt.Errorf("decrypt with %s: %w (is this the identity the cluster was created with?)", k.Path, err)
	}
	return io.ReadAll(d)
}

// SetKeyLoader defers loading (or creating) the age identity until a
// secret is first read or written, so commands that never touch secrets
// (plan, cost) create no key file.
func (s *Store) SetKeyLoader(load func() (*Keyring, error)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.keyLoader = load
}

// keyring returns the loaded identity, loading it on first use.
func (s *Store) keyring() (*Keyring, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.keys == nil && s.keyLoader != nil {
		k, err := s.keyLoader()
		if err != nil {
			return nil, err
		}
		s.keys = k
	}
	if s.keys == nil {
		return nil, errors.New("no age identity loaded: cannot read or store secrets")
	}
	return s.keys, nil
}

// HasSecret reports whether a secret blob is stored.
func (s *Store) HasSecret(name string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, ok := s.cur.Secrets[name]
	return ok
}

// SecretPath returns the file holding a secret blob.
func (s *Store) SecretPath(name string) string {
	return filepath.Join(s.dir, "secrets", name+".age")
}

// Secret decrypts a stored secret blob.
func (s *Store) Secret(name string) ([]byte, error) {
	keys, err := s.keyring()
	if err != nil {
		return nil, err
	}
	if !s.HasSecret(name) {
		return nil, fmt.Errorf("no secret %q in %s yet: run \"ohmytalos apply\" first", name, s.dir)
	}
	ct, err := os.ReadFile(s.SecretPath(name))
	if err != nil {
		return nil, fmt.Errorf("read secret %s: %w", name, err)
	}
	return keys.Decrypt(ct)
}
