package state

import (
	"errors"
	"strings"

	"filippo.io/age"
)

// Recipient returns the age public key (age1...) the cluster's secrets are
// encrypted to, loading the identity on first use. Files encrypted to it
// (etcd snapshots) open with the same identity file.
func (s *Store) Recipient() (string, error) {
	keys, err := s.keyringFor(false)
	if err != nil {
		return "", err
	}
	return keys.Recipient(), nil
}

// Identity returns the cluster's age identities (every one found, tried in
// turn) and the files they came from, to decrypt what was encrypted to
// Recipient.
func (s *Store) Identity() (age.Identity, string, error) {
	keys, err := s.keyringFor(false)
	if err != nil {
		return nil, "", err
	}
	return anyIdentity(keys.identities()), strings.Join(keys.keyFiles(), ", "), nil
}

// anyIdentity unwraps with the first of ids that can, as age.Decrypt does
// with several identities.
type anyIdentity []age.Identity

// Unwrap implements age.Identity.
func (ids anyIdentity) Unwrap(stanzas []*age.Stanza) ([]byte, error) {
	for _, id := range ids {
		key, err := id.Unwrap(stanzas)
		if errors.Is(err, age.ErrIncorrectIdentity) {
			continue
		}
		return key, err
	}
	return nil, age.ErrIncorrectIdentity
}
