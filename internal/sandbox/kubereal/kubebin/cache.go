package kubebin

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
)

// cached is a program's binary in the cache and its recorded sha256.
type cached struct{ path, sum string }

// bad is a program the cache lacks, or holds otherwise than it was built,
// and why.
type bad struct {
	program
	why string
}

// ensureCached returns the paths of ps in the cache directory, building
// the ones it lacks. A cache that already holds them all for this stamp,
// each matching the sha256 recorded at its build, is used as it is,
// without the lock, so a read-only one works.
func (b *Build) ensureCached(ctx context.Context, ps []program) (map[string]cached, error) {
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

	out := map[string]cached{}
	for _, p := range ps {
		out[p.name] = cached{path: filepath.Join(dir, "bin", p.name)}
	}

	bads, sums := unverified(dir, stamp, ps)
	if len(bads) == 0 {
		b.markCached(ps)

		return withSums(out, sums), nil
	}

	if err := os.MkdirAll(filepath.Join(dir, "bin"), 0o755); err != nil {
		return nil, unwritable(dir, bads, err)
	}

	unlock, err := b.o.lock(ctx, filepath.Join(dir, ".lock"), func(pid int) {
		b.update(func(s *Status) { s.State, s.HolderPID = Waiting, pid })
		b.progress(b.Status().Headline())
	})
	if err != nil {
		if errors.Is(err, syscall.EROFS) || errors.Is(err, syscall.EACCES) || errors.Is(err, syscall.EPERM) {
			return nil, unwritable(dir, bads, err)
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

		_ = os.Remove(filepath.Join(dir, sumsFile))
	}

	bads, sums = unverified(dir, stamp, ps)
	if len(bads) == 0 {
		b.markCached(ps)

		return withSums(out, sums), nil
	}

	for i, p := range bads {
		switch {
		case first:
			bads[i].why = "first run"
		case p.why == "":
			bads[i].why = "the cached build is for other versions"
		default:
			b.mu.Lock()
			if b.rebuilt == nil {
				b.rebuilt = map[string]string{}
			}
			b.rebuilt[p.name] = p.why
			b.mu.Unlock()
		}
	}

	berr := b.build(ctx, goBin, dir, bads)

	// Record the sha256 of each binary installed, even when the other
	// module's build failed.
	for _, p := range bads {
		if st := b.Status(); !slices.ContainsFunc(st.Programs, func(q Program) bool { return q.Name == p.name && q.Built }) {
			continue
		}

		sum, err := fileSum(filepath.Join(dir, "bin", p.name))
		if err != nil {
			return nil, fmt.Errorf("record the sha256 of the %s just built: %w", p.name, err)
		}

		sums[p.name] = sum
	}

	if err := writeSums(dir, sums); err != nil {
		return nil, fmt.Errorf("record the sandbox's Kubernetes binaries' sha256 in %s: %w", filepath.Join(dir, sumsFile), err)
	}

	if berr != nil {
		return nil, berr
	}

	if err := writeAtomic(filepath.Join(dir, "stamp"), []byte(stamp)); err != nil {
		return nil, fmt.Errorf("record the sandbox's Kubernetes build: %w", err)
	}

	return withSums(out, sums), nil
}

func withSums(out map[string]cached, sums map[string]string) map[string]cached {
	for name, c := range out {
		c.sum = sums[name]
		out[name] = c
	}

	return out
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

// unverified are the programs of ps that dir lacks for this stamp, or
// holds otherwise than they were built (their sha256 differs from the one
// recorded then, or none is recorded), each with why; and the recorded
// sums. With another stamp, all of ps are, with no why.
func unverified(dir, stamp string, ps []program) ([]bad, map[string]string) {
	sums := readSums(dir)

	if readStamp(dir) != stamp {
		out := make([]bad, 0, len(ps))
		for _, p := range ps {
			out = append(out, bad{program: p})
		}

		return out, sums
	}

	var out []bad

	for _, p := range ps {
		if why := mismatch(filepath.Join(dir, "bin", p.name), sums[p.name]); why != "" {
			out = append(out, bad{program: p, why: why})
		}
	}

	return out, sums
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
