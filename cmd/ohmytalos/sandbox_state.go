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

// sandboxStates is the folder, beside the spec's .ohmytalos, that holds
// the in-process sandbox's states. Its leading dot keeps it out of every
// real cluster's reach: a cluster name is a DNS label and starts with a
// letter (spec validation), so .ohmytalos/NAME is never this folder nor
// inside it.
const sandboxStates = ".sandbox"

// sandboxStateDir is where the in-process sandbox keeps a cluster's state
// unless --state-dir says otherwise.
func (g *globals) sandboxStateDir(name string) string {
	return filepath.Join(filepath.Dir(g.config), ".ohmytalos", sandboxStates, name)
}

// isSandboxState reports whether dir is marked as a sandbox state. The
// marker is required wherever dir is, the default folder included.
func isSandboxState(dir string) bool {
	fi, err := os.Lstat(filepath.Join(dir, sandboxMarker))
	return err == nil && fi.Mode().IsRegular()
}

// enclosingState returns the nearest folder above dir that holds a
// cluster state, or "" when there is none: a sandbox state is never
// deleted from inside another state directory.
func enclosingState(dir string) string {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return ""
	}
	for p := filepath.Dir(abs); ; p = filepath.Dir(p) {
		if state.Exists(p) {
			return p
		}
		if filepath.Dir(p) == p {
			return ""
		}
	}
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
	if outer := enclosingState(dir); outer != "" {
		return fmt.Errorf("--sandbox: %s is inside the cluster state %s, so --sandbox will not delete it "+
			"(it may hold a real cluster's secrets): pass --state-dir with a folder outside every state directory", dir, outer)
	}
	if !isSandboxState(dir) {
		what := "files"
		if state.Exists(dir) {
			what = "a cluster state"
		}
		return fmt.Errorf("--sandbox: the state folder %s holds %s but is not marked as a sandbox state (no %s file), "+
			"so --sandbox will not delete it (it may be a real cluster's state and secrets): move it away, drop --state-dir "+
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
