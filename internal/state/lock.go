package state

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"time"
)

// ErrLocked is returned when another run holds the cluster's lock.
var ErrLocked = errors.New("cluster is locked by another run")

// LockInfo says who holds a lock.
type LockInfo struct {
	PID     int       `json:"pid"`
	Host    string    `json:"host"`
	Command string    `json:"command"`
	Since   time.Time `json:"since"`
}

// Lock takes the cluster's exclusive lock, failing fast when another run
// holds it. The lock is an flock on a file, so the kernel releases it when
// the holder dies, even by kill -9.
func (s *Store) Lock(command string) error {
	path := filepath.Join(s.dir, "lock")
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return fmt.Errorf("open lock %s: %w", path, err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		defer f.Close()
		var info LockInfo
		b, _ := os.ReadFile(path)
		if json.Unmarshal(b, &info) == nil && info.PID != 0 {
			return fmt.Errorf("%w: %q (pid %d on %s) has held it since %s; wait for it to finish or stop it",
				ErrLocked, info.Command, info.PID, info.Host, info.Since.Format(time.RFC3339))
		}
		return fmt.Errorf("%w: wait for the other run to finish or stop it", ErrLocked)
	}
	host, _ := os.Hostname()
	b, _ := json.Marshal(LockInfo{PID: os.Getpid(), Host: host, Command: command, Since: time.Now().UTC()})
	_ = f.Truncate(0)
	_, _ = f.WriteAt(b, 0)
	_ = f.Sync()
	s.lockFile = f
	// The state was read when it was opened, maybe while another run held
	// the lock and wrote: read it again now that no one else can.
	if err := s.reload(); err != nil {
		_ = s.Unlock()
		return err
	}
	return nil
}

// Unlock releases the lock taken by Lock.
func (s *Store) Unlock() error {
	if s.lockFile == nil {
		return nil
	}
	f := s.lockFile
	s.lockFile = nil
	_ = f.Truncate(0)
	_ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
	return f.Close()
}
