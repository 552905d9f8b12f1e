package state

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"filippo.io/age"
	"filippo.io/age/armor"
)

// Keyring encrypts secret blobs at rest with an age X25519 identity, so the
// standard `age` CLI can decrypt them: `age -d -i KEYFILE FILE.age`. It
// decrypts with every identity of every key file it found, as SOPS does
// ("each identity will be tried in sequence until one is able to decrypt
// the data", getsops/sops README.rst, age section).
type Keyring struct {
	identity *age.X25519Identity // encrypts: the first of the first file
	all      []age.Identity      // decrypt: every identity found
	files    []string            // the key files the identities came from
	// Path is the identity file in use (the one secrets are encrypted to).
	Path string
	// Created is true when LoadKeyring had to create a new identity.
	Created bool
}

// ErrNoIdentity is returned by FindKeyring when no key file exists.
var ErrNoIdentity = errors.New("no age identity found")

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

// LoadKeyring reuses the identities of the existing candidates (see
// FindKeyring), or creates one (mode 0600) at newPath when there is none.
// Only a command that writes secrets calls it: reading never creates.
func LoadKeyring(candidates []string, newPath string) (*Keyring, error) {
	k, err := FindKeyring(candidates)
	if !errors.Is(err, ErrNoIdentity) {
		return k, err
	}
	return createKeyring(newPath)
}

// FindKeyring reads every existing candidate key file and keeps all their
// identities: secrets are encrypted to the first X25519 identity of the
// first file, and decrypted with any of them. It fails with ErrNoIdentity,
// naming where it looked, when no candidate exists; it never creates one.
func FindKeyring(candidates []string) (*Keyring, error) {
	k := &Keyring{}
	for _, p := range candidates {
		if slices.Contains(k.files, p) {
			continue
		}
		b, err := os.ReadFile(p)
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("read age identity %s: %w", p, err)
		}
		ids, err := parseIdentities(b)
		if err != nil {
			return nil, fmt.Errorf("age identity file %s: %w", p, err)
		}
		if k.identity == nil {
			id, err := firstX25519(ids)
			if err != nil {
				return nil, fmt.Errorf("age identity file %s: %w", p, err)
			}
			k.identity, k.Path = id, p
		}
		k.all = append(k.all, ids...)
		k.files = append(k.files, p)
	}
	if k.identity == nil {
		return nil, fmt.Errorf("%w: looked in %s; point SOPS_AGE_KEY_FILE (or OHMYTALOS_AGE_KEY_FILE) at the key file the cluster's secrets were encrypted to, "+
			"or run this where that file is (a new identity is created only by a command that writes secrets, such as apply)",
			ErrNoIdentity, strings.Join(candidates, ", "))
	}
	return k, nil
}

// createKeyring generates an identity and writes it to newPath (mode
// 0600, never over an existing file).
func createKeyring(newPath string) (*Keyring, error) {
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
	return &Keyring{identity: id, all: []age.Identity{id}, files: []string{newPath}, Path: newPath, Created: true}, nil
}

func parseIdentities(b []byte) ([]age.Identity, error) {
	ids, err := age.ParseIdentities(bytes.NewReader(b))
	if err != nil {
		return nil, fmt.Errorf("not an age identity file: %w", err)
	}
	return ids, nil
}

func firstX25519(ids []age.Identity) (*age.X25519Identity, error) {
	for _, id := range ids {
		if x, ok := id.(*age.X25519Identity); ok {
			return x, nil
		}
	}
	return nil, errors.New("holds no X25519 identity: expected an age secret key line, as age-keygen writes")
}

// identities are what Decrypt tries, in order.
func (k *Keyring) identities() []age.Identity {
	if len(k.all) == 0 {
		return []age.Identity{k.identity}
	}
	return k.all
}

func (k *Keyring) keyFiles() []string {
	if len(k.files) == 0 {
		return []string{k.Path}
	}
	return k.files
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
	d, err := age.Decrypt(r, k.identities()...)
	if err != nil {
		return nil, fmt.Errorf("decrypt with the identities in %s: %w (is one of them the identity the cluster was created with?)", strings.Join(k.keyFiles(), ", "), err)
	}
	return io.ReadAll(d)
}

// SetKeyLoader defers loading (or creating) the age identity until a
// secret is first written, so commands that never touch secrets (plan,
// cost) create no key file.
func (s *Store) SetKeyLoader(load func() (*Keyring, error)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.keyLoader = load
}

// SetKeyFinder sets how the identity is found for reading secrets (and the
// recipient): it must never create one (FindKeyring), so a read-only
// command under another HOME fails with where it looked instead of
// quietly making an identity that opens nothing. Without a finder, reads
// use the loader.
func (s *Store) SetKeyFinder(find func() (*Keyring, error)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.keyFinder = find
}

// keyringFor returns the loaded identity, loading it on first use: with
// the loader (which may create one) to write, the finder to read.
func (s *Store) keyringFor(write bool) (*Keyring, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.keys != nil {
		return s.keys, nil
	}
	load := s.keyLoader
	if !write && s.keyFinder != nil {
		load = s.keyFinder
	}
	if load == nil {
		return nil, errors.New("no age identity loaded: cannot read or store secrets")
	}
	k, err := load()
	if err != nil {
		return nil, err
	}
	s.keys = k
	return k, nil
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
	if !s.HasSecret(name) {
		return nil, fmt.Errorf("no secret %q in %s yet: run \"ohmytalos apply\" first", name, s.dir)
	}
	keys, err := s.keyringFor(false)
	if err != nil {
		return nil, err
	}
	ct, err := os.ReadFile(s.SecretPath(name))
	if err != nil {
		return nil, fmt.Errorf("read secret %s: %w", name, err)
	}
	pt, err := keys.Decrypt(ct)
	if err != nil {
		return nil, err
	}
	s.observed(name, pt)
	return pt, nil
}
