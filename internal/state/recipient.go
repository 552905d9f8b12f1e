package state

import "filippo.io/age"

// Recipient returns the age public key (age1...) the cluster's secrets are
// encrypted to, loading the identity on first use. Files encrypted to it
// (etcd snapshots) open with the same identity file.
func (s *Store) Recipient() (string, error) {
	keys, err := s.keyring()
	if err != nil {
		return "", err
	}
	return keys.Recipient(), nil
}

// Identity returns the cluster's age identity and the file it came from,
// to decrypt what was encrypted to Recipient.
func (s *Store) Identity() (age.Identity, string, error) {
	keys, err := s.keyring()
	if err != nil {
		return nil, "", err
	}
	return keys.identity, keys.Path, nil
}
