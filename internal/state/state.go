// Package state keeps per-cluster progress and the IDs of what exists:
// atomic writes, an exclusive lock, a schema version, and age encryption at
// rest for the cluster's secret blobs (Talos secrets, talosconfig,
// kubeconfig).
package state

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"
)

// SchemaVersion is the state format this build writes and reads.
const SchemaVersion = 1

// Step statuses.
const (
	StatusPending = "pending"
	StatusRunning = "running"
	StatusDone    = "done"
	StatusFailed  = "failed"
)

// State is what a cluster's runs have done so far.
type State struct {
	Schema  int    `json:"schema"`
	Cluster string `json:"cluster"`
	// ClusterID is the cluster's random identity, carried by every
	// resource as the label ohmytalos.io/cluster-id: two checkouts of a
	// spec with the same name are two clusters.
	ClusterID string                     `json:"clusterID,omitempty"`
	SpecHash  string                     `json:"specHash,omitempty"`
	Created   time.Time                  `json:"created"`
	Updated   time.Time                  `json:"updated"`
	Steps     map[string]*StepState      `json:"steps"`
	Resources map[string]Resource        `json:"resources"`
	Secrets   map[string]string          `json:"secrets,omitempty"` // name -> file under secrets/
	Data      map[string]json.RawMessage `json:"data,omitempty"`
}

// StepState is one step's progress.
type StepState struct {
	Status   string    `json:"status"`
	SpecHash string    `json:"specHash,omitempty"`
	Started  time.Time `json:"started,omitempty"`
	Finished time.Time `json:"finished,omitempty"`
	Error    string    `json:"error,omitempty"`
}

// Resource is something that exists outside, with the ID to find it again.
type Resource struct {
	Kind  string            `json:"kind"`
	ID    int64             `json:"id,omitempty"`
	Name  string            `json:"name"`
	Step  string            `json:"step"`
	Attrs map[string]string `json:"attrs,omitempty"`
}

// Step returns a step's state (pending when unknown).
func (s State) Step(name string) StepState {
	if st, ok := s.Steps[name]; ok && st != nil {
		return *st
	}
	return StepState{Status: StatusPending}
}

// Store reads and writes one cluster's state directory.
type Store struct {
	dir       string
	cluster   string // "" accepts any state's cluster
	keys      *Keyring
	keyLoader func() (*Keyring, error)
	keyFinder func() (*Keyring, error)

	mu   sync.Mutex
	idMu sync.Mutex // serialises EnsureClusterID
	cur  *State
	// beforeRename, when set, runs between writing the temp file and the
	// rename: tests use it to simulate a crash at the worst moment.
	beforeRename func() error
	lockFile     *os.File
	// observe sees every secret read or written (see SetSecretObserver).
	observe func(name string, plaintext []byte)
}

// ErrNewerSchema is returned when the state was written by a newer build.
var ErrNewerSchema = errors.New("state written by a newer ohmytalos")

// Open opens (creating if needed) the state directory of cluster in dir.
// keys may be nil when no secret blob is read or written.
func Open(dir, cluster string, keys *Keyring) (*Store, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("create state directory %s: %w", dir, err)
	}
	s := &Store{dir: dir, keys: keys, cluster: cluster}
	st, err := s.load()
	if err != nil {
		return nil, err
	}
	if st == nil {
		now := time.Now().UTC()
		st = &State{Schema: SchemaVersion, Cluster: cluster, Created: now}
		normalize(st)
		adoptSecretFiles(dir, st)
		if err := adoptClusterID(dir, st); err != nil {
			return nil, err
		}
	}
	s.cur = st
	return s, nil
}

// load reads the state file and checks it is the cluster's; nil when
// there is no state file yet.
func (s *Store) load() (*State, error) {
	st, err := s.read()
	if err != nil || st == nil {
		return nil, err
	}
	if st.Cluster != s.cluster && s.cluster != "" {
		return nil, fmt.Errorf("state in %s belongs to cluster %q, not %q: pass the right --state-dir or --config", s.dir, st.Cluster, s.cluster)
	}
	normalize(st)
	adoptSecretFiles(s.dir, st)
	if err := adoptClusterID(s.dir, st); err != nil {
		return nil, err
	}
	return st, nil
}

// reload replaces the in-memory state with the file's, after the lock
// is taken: a run that opened the state while another held the lock
// must not write that other run's old state back.
func (s *Store) reload() error {
	st, err := s.load()
	if err != nil {
		return err
	}
	if st == nil {
		return nil // nothing written yet: what Open made stands
	}
	s.mu.Lock()
	s.cur = st
	s.mu.Unlock()
	return nil
}

// Exists reports whether dir holds a state file.
func Exists(dir string) bool {
	_, err := os.Stat(filepath.Join(dir, fileName))
	return err == nil
}

// Dir is the state directory.
func (s *Store) Dir() string { return s.dir }

const fileName = "state.json"

// backupName is the previous state.json, kept by every write: a state
// file damaged after the last write can be restored from it.
const backupName = fileName + ".bak"

func normalize(st *State) {
	if st.Steps == nil {
		st.Steps = map[string]*StepState{}
	}
	if st.Resources == nil {
		st.Resources = map[string]Resource{}
	}
	if st.Secrets == nil {
		st.Secrets = map[string]string{}
	}
	if st.Data == nil {
		st.Data = map[string]json.RawMessage{}
	}
}

func (s *Store) read() (*State, error) {
	b, err := os.ReadFile(filepath.Join(s.dir, fileName))
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read state: %w", err)
	}
	var probe struct {
		Schema int `json:"schema"`
	}
	if err := json.Unmarshal(b, &probe); err != nil {
		return nil, corruptError(s.dir, err)
	}
	if probe.Schema > SchemaVersion {
		return nil, fmt.Errorf("%w: %s has schema %d, this build reads up to %d; upgrade ohmytalos", ErrNewerSchema, filepath.Join(s.dir, fileName), probe.Schema, SchemaVersion)
	}
	var st State
	if err := json.Unmarshal(b, &st); err != nil {
		return nil, corruptError(s.dir, err)
	}
	return &st, nil
}

// Get returns a deep copy of the current state.
func (s *Store) Get() State {
	s.mu.Lock()
	defer s.mu.Unlock()
	return clone(s.cur)
}

func clone(st *State) State {
	b, _ := json.Marshal(st)
	var out State
	_ = json.Unmarshal(b, &out)
	normalize(&out)
	return out
}

// Update applies fn to the state and writes it atomically. When fn or the
// write fails, the in-memory state is left as it was.
func (s *Store) Update(fn func(*State) error) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	next := clone(s.cur)
	if err := fn(&next); err != nil {
		return err
	}
	next.Schema = SchemaVersion
	next.Updated = time.Now().UTC()
	b, err := json.MarshalIndent(&next, "", "  ")
	if err != nil {
		return fmt.Errorf("encode state: %w", err)
	}
	keepPrevious(filepath.Join(s.dir, fileName))
	if err := writeAtomic(filepath.Join(s.dir, fileName), b, s.beforeRename); err != nil {
		return err
	}
	s.cur = &next
	return nil
}

// PutResource records a resource under key and checkpoints.
func (s *Store) PutResource(key string, r Resource) error {
	return s.Update(func(st *State) error { st.Resources[key] = r; return nil })
}

// DeleteResource forgets a resource and checkpoints.
func (s *Store) DeleteResource(key string) error {
	return s.Update(func(st *State) error { delete(st.Resources, key); return nil })
}

// Resource looks a resource up by key.
func (s *Store) Resource(key string) (Resource, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r, ok := s.cur.Resources[key]
	return r, ok
}

// PutData stores a step's own JSON data and checkpoints.
func (s *Store) PutData(key string, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("encode %s: %w", key, err)
	}
	return s.Update(func(st *State) error { st.Data[key] = b; return nil })
}

// GetData decodes a step's data into v; found is false when absent.
func (s *Store) GetData(key string, v any) (found bool, err error) {
	s.mu.Lock()
	b, ok := s.cur.Data[key]
	s.mu.Unlock()
	if !ok {
		return false, nil
	}
	return true, json.Unmarshal(b, v)
}

// writeAtomic writes data to path through a temp file in the same folder,
// fsync and rename, so a crash leaves either the old or the new file.
func writeAtomic(path string, data []byte, beforeRename func() error) error {
	dir := filepath.Dir(path)
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	tmp := f.Name()
	ok := false
	defer func() {
		if !ok {
			_ = os.Remove(tmp)
		}
	}()
	if err := f.Chmod(0o600); err != nil {
		f.Close()
		return fmt.Errorf("write %s: %w", path, err)
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return fmt.Errorf("sync %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if beforeRename != nil {
		if err := beforeRename(); err != nil {
			return err
		}
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("replace %s: %w", path, err)
	}
	ok = true
	if d, err := os.Open(dir); err == nil {
		_ = d.Sync()
		d.Close()
	}
	return nil
}

// keepPrevious hard-links the current state file to state.json.bak before
// it is replaced: the rename then leaves the old content under the backup
// name. Best effort: a state without a backup still works.
func keepPrevious(path string) {
	if _, err := os.Stat(path); err != nil {
		return
	}
	bak := filepath.Join(filepath.Dir(path), backupName)
	_ = os.Remove(bak)
	_ = os.Link(path, bak)
}

// corruptError explains a state file that cannot be decoded, and the
// recoveries that keep the cluster's secrets: never one that loses them.
func corruptError(dir string, cause error) error {
	path := filepath.Join(dir, fileName)
	restore := ""
	if _, err := os.Stat(filepath.Join(dir, backupName)); err == nil {
		restore = fmt.Sprintf("restore the previous write with \"cp %s %s\", or ", filepath.Join(dir, backupName), path)
	}
	return fmt.Errorf("state file %s is corrupt: %w; keep %s where it is (it holds the cluster's Talos secrets bundle, never delete or move it), then %s"+
		"move only %s aside and run apply: it rebuilds the state from the kept secrets and the resources labelled with the cluster's ID",
		path, cause, filepath.Join(dir, "secrets"), restore, fileName)
}
