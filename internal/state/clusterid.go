package state

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
)

// clusterIDFile keeps the cluster ID beside the secrets bundle it was
// made with, so a state rebuilt from a kept secrets/ folder (state.json
// lost) is the same cluster. The ID is not secret: every resource carries
// it as a label.
const clusterIDFile = "cluster-id"

var clusterIDPattern = regexp.MustCompile(`^[0-9a-f]{32}$`)

// ClusterID is the cluster's random ID, "" before the first apply (or in a
// state written before cluster IDs).
func (s *Store) ClusterID() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.cur.ClusterID
}

// EnsureClusterID returns the cluster's ID, generating and storing it (in
// the state and in secrets/cluster-id) on first use; created is true then.
func (s *Store) EnsureClusterID() (id string, created bool, err error) {
	s.idMu.Lock()
	defer s.idMu.Unlock()
	if id := s.ClusterID(); id != "" {
		return id, false, s.writeClusterIDFile(id)
	}
	b := make([]byte, 16)
	if _, err := rand.Read(b); err != nil {
		return "", false, fmt.Errorf("generate the cluster ID: %w", err)
	}
	id = hex.EncodeToString(b)
	if err := s.writeClusterIDFile(id); err != nil {
		return "", false, err
	}
	if err := s.Update(func(st *State) error { st.ClusterID = id; return nil }); err != nil {
		return "", false, err
	}
	return id, true, nil
}

// writeClusterIDFile stores id in secrets/cluster-id unless it is there.
func (s *Store) writeClusterIDFile(id string) error {
	path := filepath.Join(s.dir, "secrets", clusterIDFile)
	if b, err := os.ReadFile(path); err == nil && strings.TrimSpace(string(b)) == id {
		return nil
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return fmt.Errorf("create %s: %w", filepath.Dir(path), err)
	}
	return writeAtomic(path, []byte(id+"\n"), nil)
}

// adoptClusterID takes the ID from secrets/cluster-id when the state has
// none (a state rebuilt beside the kept secrets).
func adoptClusterID(dir string, st *State) error {
	if st.ClusterID != "" {
		return nil
	}
	path := filepath.Join(dir, "secrets", clusterIDFile)
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("read the cluster ID %s: %w", path, err)
	}
	id := strings.TrimSpace(string(b))
	if !clusterIDPattern.MatchString(id) {
		return fmt.Errorf("cluster ID file %s holds %q, not 32 hex characters: restore it from your backup of secrets/ (every resource of the cluster carries the ID as the label ohmytalos.io/cluster-id)", path, truncate(id, 40))
	}
	st.ClusterID = id
	return nil
}

func truncate(s string, n int) string {
	if len(s) > n {
		return s[:n] + "…"
	}
	return s
}
