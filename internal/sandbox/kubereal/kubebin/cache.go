package kubebin

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
)

// ensureCached returns the paths of ps in the cache directory, building
// the ones it lacks. A cache that already holds them all for this stamp
// is used as it is, without the lock, so a read-only one works.
func (b *Build) ensureCached(ctx context.Context, ps []program) (map[string]string, error) {
	goBin, err := exec.LookPath("go")
	if err != nil {
		return nil, fmt.Errorf("the sandbox's real Kubernetes control plane is built from source and needs the go command on PATH: install Go 1.26 or newer (https://go.dev/dl/), or set %s to a directory with prebuilt etcd %s and kube-apiserver, kube-controller-manager and kube-scheduler %s", BinDirEnv, EtcdVersion, KubernetesVersion)
	}

	dir := b.o.Dir
	if dir == "" {
		if dir, err = DefaultDir(); err != nil {
			return nil, err
		}
	}

	b.update(func(s *Status) { s.Dir = dir })

	stamp, err := wantStamp(ctx, goBin)
	if err != nil {
		return nil, err
	}

	paths := map[string]string{}
	for _, p := range ps {
		paths[p.name] = filepath.Join(dir, "bin", p.name)
	}

	if missing := missingIn(dir, stamp, ps); len(missing) == 0 {
		b.markCached(ps)

		return paths, nil
	}

	if err := os.MkdirAll(filepath.Join(dir, "bin"), 0o755); err != nil {
		return nil, unwritable(dir, err)
	}

	unlock, err := lockDir(ctx, filepath.Join(dir, ".lock"), func(pid int) {
		b.update(func(s *Status) { s.State, s.HolderPID = Waiting, pid })
		b.progress(b.Status().Headline())
	})
	if err != nil {
		if errors.Is(err, syscall.EROFS) || errors.Is(err, syscall.EACCES) || errors.Is(err, syscall.EPERM) {
			return nil, unwritable(dir, err)
		}

		return nil, err
	}
	defer unlock()

	// Another process may have built them while this one waited.
	first := readStamp(dir) == ""
	if readStamp(dir) != stamp {
		// Binaries of another build must not pass for this one's.
		for _, p := range programs {
			_ = os.Remove(filepath.Join(dir, "bin", p.name))
		}
	}

	missing := missingIn(dir, stamp, ps)
	if len(missing) == 0 {
		b.markCached(ps)

		return paths, nil
	}

	if err := b.build(ctx, goBin, dir, missing, first); err != nil {
		return nil, err
	}

	if err := writeAtomic(filepath.Join(dir, "stamp"), []byte(stamp)); err != nil {
		return nil, fmt.Errorf("record the sandbox's Kubernetes build: %w", err)
	}

	return paths, nil
}

func (b *Build) markCached(ps []program) {
	for _, p := range ps {
		b.setProgram(p.name, func(s *Program) {
			if !s.Built {
				s.Built, s.From = true, "cache"
			}
		})
	}
}

// missingIn are the programs of ps that dir lacks for this stamp.
func missingIn(dir, stamp string, ps []program) []program {
	if readStamp(dir) != stamp {
		return ps
	}

	var out []program

	for _, p := range ps {
		if st, err := os.Stat(filepath.Join(dir, "bin", p.name)); err != nil || !st.Mode().IsRegular() {
			out = append(out, p)
		}
	}

	return out
}

// buildEnv is the environment of the go commands: the caller's, without a
// workspace or module flags of theirs that would change what gets built.
func buildEnv() []string {
	var env []string

	for _, kv := range os.Environ() {
		if strings.HasPrefix(kv, "GOFLAGS=") || strings.HasPrefix(kv, "GOWORK=") {
			continue
		}

		env = append(env, kv)
	}

	return append(env, "GOWORK=off", "GOFLAGS=-mod=readonly")
}

func writeAtomic(path string, data []byte) error {
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, data, 0o644); err != nil {
		return err
	}

	return os.Rename(tmp, path)
}
