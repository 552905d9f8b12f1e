package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/ohmytalos/ohmytalos/internal/state"
)

// sandboxMarker is the file that marks a state directory as the in-process
// sandbox's: only such a directory is ever reset by --sandbox.
const sandboxMarker = "SANDBOX"

const sandboxMarkerText = `This state directory belongs to the in-process sandbox of ohmytalos
(--sandbox): nothing it names exists on Hetzner. Every --sandbox run
deletes it and starts over. A directory without this file is never deleted,
and this file marks this directory only: a cluster state inside it (a
state.json or a secrets folder without this file) stops the reset.
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

// enclosingState returns the nearest folder above dir that holds a real
// cluster state, or "" when there is none: a sandbox state is never
// deleted from inside another state directory. A folder above is a real
// state when it lacks the marker and holds a state.json, or a secrets
// folder (itself unmarked) with the cluster ID or the Talos secrets bundle
// in it: a state whose state.json was lost keeps those. Other secrets
// folders above (a repository's own, of SOPS or agenix files) do not
// count: deleting dir cannot reach them.
func enclosingState(dir string) string {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return ""
	}
	for p := filepath.Dir(abs); ; p = filepath.Dir(p) {
		if !isSandboxState(p) && (state.Exists(p) || keepsClusterSecrets(filepath.Join(p, "secrets"))) {
			return p
		}
		if filepath.Dir(p) == p {
			return ""
		}
	}
}

// keepsClusterSecrets reports whether dir is an unmarked folder holding
// what ohmytalos keeps of a cluster: its ID or its Talos secrets bundle.
func keepsClusterSecrets(dir string) bool {
	if isSandboxState(dir) {
		return false
	}
	for _, n := range []string{"cluster-id", "talos-secrets.age"} {
		if _, err := os.Lstat(filepath.Join(dir, n)); err == nil {
			return true
		}
	}
	return false
}

// stateBelow returns the first folder inside dir (dir itself excluded)
// that holds a real cluster state, or "" when there is none. Inside a
// sandbox state every state.json and every secrets folder is the
// sandbox's own only where the folder holding it carries the marker (the
// marker marks its own folder, not the folders below it): any other is a
// real state, perhaps made later with --state-dir inside the sandbox's.
// Symbolic links are not followed (os.RemoveAll removes the link only).
func stateBelow(dir string) (string, error) {
	found := ""
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() || p == dir || isSandboxState(p) {
			return nil
		}
		if state.Exists(p) {
			found = p
			return fs.SkipAll
		}
		if fi, err := os.Lstat(filepath.Join(p, "secrets")); err == nil && fi.IsDir() && !isSandboxState(filepath.Join(p, "secrets")) {
			found = p
			return fs.SkipAll
		}
		return nil
	})
	return found, err
}

// resetSandboxState clears an in-process sandbox's state directory. It
// refuses when dir holds anything but is not marked as a sandbox state (a
// real cluster's state and secrets, or any folder, passed by mistake with
// --state-dir), when a real state lies above it or inside it (made there
// after the sandbox marked dir), and when another run holds its lock.
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
	inner, err := stateBelow(dir)
	if err != nil {
		return fmt.Errorf("--sandbox: look for cluster states inside %s before deleting it: %w; --sandbox deletes nothing it has not looked through: fix the folder's permissions or pass another --state-dir", dir, err)
	}
	if inner != "" {
		return fmt.Errorf("--sandbox: the sandbox state folder %s holds the cluster state %s (a state.json or secrets folder without the %s marker), "+
			"so --sandbox will not delete %s (it may hold a real cluster's secrets): move %s out of %s, or pass another --state-dir (the sandbox's marker marks its own folder only)",
			dir, inner, sandboxMarker, dir, inner, dir)
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

// refuseSandboxState refuses a run without --sandbox in a state folder
// marked as the sandbox's: what that state names exists in no Hetzner
// project, and the next --sandbox run deletes the folder with whatever a
// real run wrote there.
func refuseSandboxState(dir string) error {
	if !isSandboxState(dir) {
		return nil
	}
	return fmt.Errorf("the state folder %s is the in-process sandbox's (it holds the %s file): nothing its state names exists on Hetzner, "+
		"and the next --sandbox run deletes the folder with everything in it: pass --state-dir with another folder for a real cluster, "+
		"or add --sandbox to run against the sandbox", dir, sandboxMarker)
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
