package kubebin

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
)

// built runs Ensure into a new cache with the fake go, and returns the
// binaries, the options (their progress lines collected) and the build log.
func built(t *testing.T) (Binaries, *Options, func() []string, string) {
	t.Helper()

	logPath := fakeGo(t, "go1.26.8")

	var mu sync.Mutex

	var progress []string

	o := &Options{Dir: t.TempDir(), Getenv: noEnv, Progress: func(s string) { mu.Lock(); progress = append(progress, s); mu.Unlock() }}

	bins, err := Ensure(context.Background(), *o)
	if err != nil {
		t.Fatal(err)
	}

	lines := func() []string {
		mu.Lock()
		defer mu.Unlock()

		return append([]string(nil), progress...)
	}

	return bins, o, lines, logPath
}

func contents(t *testing.T, path string) string {
	t.Helper()

	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}

	return string(b)
}

// A wrapper script put in place of etcd is refused before etcd starts,
// and etcd is rebuilt; the line says which and why.
func TestWrapperInPlaceOfEtcdIsRebuilt(t *testing.T) {
	bins, _, progress, logPath := built(t)
	want := contents(t, bins.Etcd)

	real := bins.Etcd + ".real"
	if err := os.Rename(bins.Etcd, real); err != nil {
		t.Fatal(err)
	}

	if err := os.WriteFile(bins.Etcd, []byte("#!/bin/sh\nexec "+real+" \"$@\"\n"), 0o755); err != nil {
		t.Fatal(err)
	}

	path, rebuilt, err := bins.Verify(context.Background(), "etcd")
	if err != nil {
		t.Fatal(err)
	}

	if path != bins.Etcd || contents(t, path) != want {
		t.Errorf("Verify returned %s holding %q, want %s rebuilt (%q)", path, contents(t, path), bins.Etcd, want)
	}

	for _, w := range []string{"rebuilt etcd v3.6.16: ", bins.Etcd + " is a script, not the binary built there: its sha256 is "} {
		if !strings.Contains(rebuilt, w) {
			t.Errorf("rebuilt = %q, want it to contain %q", rebuilt, w)
		}
	}

	if got := builds(t, logPath); len(got) != 3 || got[2] != "go.etcd.io/etcd/server/v3 -mod=readonly" {
		t.Errorf("builds %q, want etcd alone rebuilt", got)
	}

	if p := strings.Join(progress(), "\n"); !strings.Contains(p, "building etcd v3.6.16 ("+bins.Etcd+" is a script") {
		t.Errorf("progress %q does not say why etcd is built again", p)
	}

	// Verified now, it is not built again.
	if _, rebuilt, err := bins.Verify(context.Background(), "etcd"); err != nil || rebuilt != "" {
		t.Errorf("Verify after the rebuild = %q, %v; want nothing rebuilt", rebuilt, err)
	}
}

// A truncated kube-apiserver is caught; while it cannot be rebuilt it is
// not returned, and the error names it and why.
func TestTruncatedAPIServerIsCaught(t *testing.T) {
	bins, o, _, logPath := built(t)
	want := contents(t, bins.APIServer)

	if err := os.Truncate(bins.APIServer, 3); err != nil {
		t.Fatal(err)
	}

	t.Setenv("FAKE_GO_FAIL", "go: no space left on device")

	path, _, err := bins.Verify(context.Background(), "kube-apiserver")
	for _, w := range []string{"kube-apiserver is not run: " + bins.APIServer + " is not the binary built there: its sha256 is ", "rebuilding it failed", "no space left on device"} {
		if err == nil || !strings.Contains(err.Error(), w) {
			t.Errorf("Verify of a truncated kube-apiserver whose build fails = %q, %v; want an error containing %q", path, err, w)
		}
	}

	if path != "" {
		t.Errorf("Verify returned %q for a binary that failed", path)
	}

	// A new Ensure (a new process) finds it too.
	_, err = Ensure(context.Background(), *o)
	if err == nil || !strings.Contains(err.Error(), "build kube-apiserver") {
		t.Errorf("Ensure with the truncated kube-apiserver = %v, want it rebuilt (and failing)", err)
	}

	t.Setenv("FAKE_GO_FAIL", "")

	path, rebuilt, err := bins.Verify(context.Background(), "kube-apiserver")
	if err != nil || contents(t, path) != want || !strings.HasPrefix(rebuilt, "rebuilt kube-apiserver v1.36.3: "+bins.APIServer+" is not the binary built there") {
		t.Errorf("Verify = %q, %q, %v; want kube-apiserver rebuilt and named", path, rebuilt, err)
	}

	if got := builds(t, logPath); len(got) != 3 || got[2] != "k8s.io/kubernetes/cmd/kube-apiserver -mod=readonly" {
		t.Errorf("builds %q, want kube-apiserver alone rebuilt", got)
	}
}

// A cache that is complete and verified is used without opening the lock
// file (as root, chmod does not stop writes, so the lock is swapped for
// one failing as a read-only file system does); one holding a changed
// binary is an error naming the binary and why.
func TestReadOnlyVerifiedCacheTakesNoLock(t *testing.T) {
	bins, o, _, _ := built(t)

	locked := 0
	o.lock = func(_ context.Context, path string, _ func(int)) (func(), error) {
		locked++

		return nil, &fs.PathError{Op: "open", Path: path, Err: syscall.EROFS}
	}

	if _, err := Ensure(context.Background(), *o); err != nil || locked != 0 {
		t.Fatalf("Ensure on a verified read-only cache = %v, and took the lock %d times; want it used without", err, locked)
	}

	if err := os.WriteFile(bins.ControllerManager, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}

	_, err := Ensure(context.Background(), *o)
	for _, w := range []string{"kube-controller-manager: " + bins.ControllerManager + " is a script, not the binary built there", "cannot be written", "read-only file system", BinDirEnv} {
		if err == nil || !strings.Contains(err.Error(), w) {
			t.Errorf("Ensure on a read-only cache with a changed binary = %v, want it to contain %q", err, w)
		}
	}

	if !errors.Is(err, errUnwritable) {
		t.Errorf("error %v is not errUnwritable", err)
	}
}

// A cache made before the sha256 were recorded is built again once.
func TestCacheWithoutSumsIsRebuilt(t *testing.T) {
	bins, o, progress, logPath := built(t)

	if err := os.Remove(filepath.Join(o.Dir, sumsFile)); err != nil {
		t.Fatal(err)
	}

	if _, err := Ensure(context.Background(), *o); err != nil {
		t.Fatal(err)
	}

	if got := builds(t, logPath); len(got) != 4 {
		t.Errorf("builds %q, want every binary built again", got)
	}

	if p := strings.Join(progress(), "\n"); !strings.Contains(p, "no sha256 is recorded for "+bins.Etcd) {
		t.Errorf("progress %q does not say why", p)
	}

	if got := readSums(o.Dir); len(got) != 4 || got["etcd"] == "" {
		t.Errorf("%s holds %v, want the four sums", sumsFile, got)
	}
}

// The user's binaries are not rebuilt: one that changed is checked again,
// and an error names the variable and the binary.
func TestVerifyUserBinaries(t *testing.T) {
	logPath := fakeGo(t, "go1.26.8")
	bin := t.TempDir()
	fakeBinary(t, bin, "etcd", "etcd Version: 3.6.16")
	fakeBinary(t, bin, "kube-apiserver", "Kubernetes v1.36.3")

	getenv := func(k string) string {
		if k == AssetsEnv {
			return bin
		}

		return ""
	}

	bins, err := Ensure(context.Background(), Options{Dir: t.TempDir(), Getenv: getenv})
	if err != nil {
		t.Fatal(err)
	}

	if path, _, err := bins.Verify(context.Background(), "kube-apiserver"); err != nil || path != filepath.Join(bin, "kube-apiserver") {
		t.Fatalf("Verify = %q, %v; want the user's kube-apiserver", path, err)
	}

	fakeBinary(t, bin, "kube-apiserver", "Kubernetes v1.35.0")

	_, _, err = bins.Verify(context.Background(), "kube-apiserver")
	for _, w := range []string{AssetsEnv + "=" + bin + ": kube-apiserver changed since its version was checked", `reports "Kubernetes v1.35.0"`} {
		if err == nil || !strings.Contains(err.Error(), w) {
			t.Errorf("Verify of a changed user kube-apiserver = %v, want it to contain %q", err, w)
		}
	}

	fakeBinary(t, bin, "kube-apiserver", "Kubernetes v1.36.3")

	if _, _, err := bins.Verify(context.Background(), "kube-apiserver"); err != nil {
		t.Errorf("Verify of a user kube-apiserver replaced by the pinned version = %v", err)
	}

	if got := builds(t, logPath); len(got) != 1 {
		t.Errorf("builds %q, want only kube-controller-manager and kube-scheduler's", got)
	}
}

// Binaries not from Ensure are not run.
func TestVerifyRefusesBinariesNotFromEnsure(t *testing.T) {
	_, _, err := Binaries{Etcd: "/bin/true"}.Verify(context.Background(), "etcd")
	if err == nil || !strings.Contains(err.Error(), "etcd (\"/bin/true\") was not found or checked by kubebin.Ensure") {
		t.Errorf("Verify of hand-made Binaries = %v", err)
	}
}

// BenchmarkFileSum hashes the binaries in the user's cache (skipped when
// they are not there): "read" each time, as a first check in a process
// does, and "remembered", as every later start of an unchanged binary.
func BenchmarkFileSum(b *testing.B) {
	dir, err := DefaultDir()
	if err != nil {
		b.Skip(err)
	}

	for _, p := range programs {
		path := filepath.Join(dir, "bin", p.name)

		st, err := os.Stat(path)
		if err != nil {
			b.Skipf("no cached binaries: %v", err)
		}

		b.Run(p.name+"/read", func(b *testing.B) {
			b.SetBytes(st.Size())

			for b.Loop() {
				sums.Lock()
				delete(sums.m, path)
				sums.Unlock()

				if _, err := fileSum(path); err != nil {
					b.Fatal(err)
				}
			}
		})

		b.Run(p.name+"/remembered", func(b *testing.B) {
			if _, err := fileSum(path); err != nil {
				b.Fatal(err)
			}

			for b.Loop() {
				if _, err := fileSum(path); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
