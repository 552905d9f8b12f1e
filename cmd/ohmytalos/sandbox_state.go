package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/ohmytalos/ohmytalos/internal/state"
)

// sandboxMarker is the file that marks a state directory as the in-process
// sandbox's: only such a directory is ever reset by --sandbox.
const sandboxMarker = "SANDBOX"

const sandboxMarkerText = `This state directory belongs to the in-process sandbox of ohmytalos
(--sandbox): nothing it names exists on Hetzner. Every --sandbox run
deletes it and starts over. A directory without this file is never deleted.
`

// sandboxStateDir is where the in-process sandbox keeps a cluster's state
// unless --state-dir says otherwise.
func (g *globals) sandboxStateDir(name string) string {
	return filepath.Join(filepath.Dir(g.config), ".ohmytalos", "sandbox", name)
}

// isSandboxState reports whether dir is marked as a sandbox state, or is
// the default sandbox directory (states written before the marker existed).
func (g *globals) isSandboxState(dir, name string) bool {
	if _, err := os.Stat(filepath.Join(dir, sandboxMarker)); err == nil {
		return true
	}
	a, errA := filepath.Abs(dir)
	b, errB := filepath.Abs(g.sandboxStateDir(name))
	return errA == nil && errB == nil && a == b
}

// resetSandboxState clears an in-process sandbox's state directory. It
// refuses when dir holds anything but is not marked as a sandbox state (a
// real cluster's state and secrets, or any folder, passed by mistake with
// --state-dir) and when another run holds its lock.
func (g *globals) resetSandboxState(dir, name string) error {
	entries, err := os.ReadDir(dir)
	if errors.Is(err, os.ErrNotExist) || (err == nil && len(entries) == 0) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("reset sandbox state %s: %w", dir, err)
	}
	if !g.isSandboxState(dir, name) {
		what := "files"
		if state.Exists(dir) {
			what = "a cluster state"
		}
		return fmt.Errorf("--sandbox --state-dir %s: the folder holds %s but is not marked as a sandbox state (no %s file), "+
			"so --sandbox will not delete it (it may be a real cluster's state and secrets): drop --state-dir "+
			"(the sandbox keeps its state in %s) or pass an empty or new folder", dir, what, sandboxMarker, g.sandboxStateDir(name))
	}
	st, err := state.Open(dir, "", nil)
	if err != nil {
		return fmt.Errorf("reset sandbox state %s: %w", dir, err)
	}
	if err := st.Lock("ohmytalos --sandbox (reset)"); err != nil {
		return fmt.Errorf("reset sandbox state %s: %w", dir, err)
	}
	defer st.Unlock()
	if err := os.RemoveAll(dir); err != nil {
		return fmt.Errorf("reset sandbox state %s: %w", dir, err)
	}
	return nil
}

// markSandboxState writes the marker into a fresh sandbox state directory
// before any state is written there.
func markSandboxState(dir string) error {
	p := filepath.Join(dir, sandboxMarker)
	if _, err := os.Stat(p); err == nil {
		return nil
	} else if !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("mark sandbox state %s: %w", dir, err)
	}
	if err := os.WriteFile(p, []byte(sandboxMarkerText), 0o600); err != nil {
		return fmt.Errorf("mark sandbox state %s: %w", dir, err)
	}
	return nil
}
