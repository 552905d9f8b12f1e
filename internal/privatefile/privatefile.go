// Package privatefile writes files that hold credentials (kubeconfig,
// talosconfig, machine configs, backups of them): atomically, with mode
// 0600 whatever mode an older file had, and through symlinks to their
// target, so a symlinked ~/.kube/config stays a symlink.
package privatefile

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// Mode is the permission every file written here gets.
const Mode os.FileMode = 0o600

// maxLinks bounds how many symlinks Resolve follows (as the kernel's
// MAXSYMLINKS does), so a loop is an error instead of a hang.
const maxLinks = 40

// Resolve follows path's symlinks, even a dangling last one, to the file
// that a write should replace. A path that does not exist is its own target.
func Resolve(path string) (string, error) {
	p := path
	for range maxLinks {
		fi, err := os.Lstat(p)
		if errors.Is(err, os.ErrNotExist) {
			return p, nil
		}
		if err != nil {
			return "", fmt.Errorf("inspect %s: %w", p, err)
		}
		if fi.Mode()&os.ModeSymlink == 0 {
			return p, nil
		}
		t, err := os.Readlink(p)
		if err != nil {
			return "", fmt.Errorf("read symlink %s: %w", p, err)
		}
		if !filepath.IsAbs(t) {
			t = filepath.Join(filepath.Dir(p), t)
		}
		p = t
	}
	return "", fmt.Errorf("%s: too many levels of symlinks: fix the link or write elsewhere with --out", path)
}

// Write replaces the file at path (or at the target of its symlinks) with
// data: a temp file in the same folder, mode 0600, fsync, rename. It
// creates missing parent folders with mode 0700 and returns the path it
// wrote, which differs from path when path is a symlink.
func Write(path string, data []byte) (string, error) {
	target, err := Resolve(path)
	if err != nil {
		return "", err
	}
	dir := filepath.Dir(target)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", fmt.Errorf("create folder %s: %w", dir, err)
	}
	f, err := os.CreateTemp(dir, "."+filepath.Base(target)+".tmp-*")
	if err != nil {
		return "", fmt.Errorf("write %s: %w", target, err)
	}
	tmp := f.Name()
	if err := fill(f, data); err != nil {
		_ = os.Remove(tmp)
		return "", fmt.Errorf("write %s: %w", target, err)
	}
	if err := os.Rename(tmp, target); err != nil {
		_ = os.Remove(tmp)
		return "", fmt.Errorf("replace %s: %w", target, err)
	}
	if d, err := os.Open(dir); err == nil {
		_ = d.Sync()
		_ = d.Close()
	}
	return target, nil
}

// fill sets the temp file's mode, writes data, syncs and closes it.
func fill(f *os.File, data []byte) error {
	err := f.Chmod(Mode)
	if err == nil {
		_, err = f.Write(data)
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// Describe is how a command reports a write: "PATH (mode 0600)", or
// "PATH -> TARGET (mode 0600)" when it went through a symlink.
func Describe(path, target string) string {
	if target == "" || target == path {
		return fmt.Sprintf("%s (mode 0600)", path)
	}
	return fmt.Sprintf("%s -> %s (mode 0600)", path, target)
}
