// Package kubebin builds the real Kubernetes control-plane binaries the
// sandbox can run (etcd, kube-apiserver, kube-controller-manager,
// kube-scheduler) from the Go module proxy, once, into the user's cache, and
// reuses them afterwards.
//
// The modules are pinned by the nested tools modules tools/kube and
// tools/kube/etcd of this repository; their go.mod and go.sum are embedded
// here (mod/*.go.mod, mod/*.go.sum, kept equal by TestEmbeddedModulesMatch)
// so an installed ohmytalos binary can build them without the source tree.
package kubebin

import (
	"context"
	_ "embed" // the tools modules' go.mod and go.sum
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// KubernetesVersion is the Kubernetes release the binaries are built at:
// Talos v1.13.9's default (machinery constants.DefaultKubernetesVersion).
const KubernetesVersion = "v1.36.3"

// EtcdVersion is the etcd release the binaries are built at.
const EtcdVersion = "v3.6.16"

var (
	//go:embed mod/kube.go.mod
	kubeGoMod []byte
	//go:embed mod/kube.go.sum
	kubeGoSum []byte
	//go:embed mod/etcd.go.mod
	etcdGoMod []byte
	//go:embed mod/etcd.go.sum
	etcdGoSum []byte
)

// Binaries are the paths of the built control-plane programs.
type Binaries struct {
	Etcd, APIServer, ControllerManager, Scheduler string
	// Version is the Kubernetes version they report (KubernetesVersion).
	Version string
}

// Options configure Ensure.
type Options struct {
	// Dir holds the binaries; default os.UserCacheDir()/ohmytalos/kube/VERSION.
	Dir string
	// Progress receives one line per binary built, e.g. "building
	// kube-apiserver v1.36.3 (first run, about 5 minutes)"; nil drops them.
	Progress func(string)
}

// program is one binary to build: its module (a tools module), its package
// and the rough time its first build takes on two idle cores.
type program struct {
	name, module, pkg string
	about             string
	ldflags           bool
}

// programs are built in this order: kube-apiserver first, since the other
// two reuse most of its compiled packages from the Go build cache.
var programs = []program{
	{name: "etcd", module: "etcd", pkg: "go.etcd.io/etcd/server/v3", about: "half a minute"},
	{name: "kube-apiserver", module: "kube", pkg: "k8s.io/kubernetes/cmd/kube-apiserver", about: "5 to 10 minutes", ldflags: true},
	{name: "kube-controller-manager", module: "kube", pkg: "k8s.io/kubernetes/cmd/kube-controller-manager", about: "2 to 4 minutes", ldflags: true},
	{name: "kube-scheduler", module: "kube", pkg: "k8s.io/kubernetes/cmd/kube-scheduler", about: "a minute", ldflags: true},
}

// startCacheDir is the user's cache directory as the process started: a
// test (or a command) that points HOME elsewhere later still finds the
// binaries built before, instead of building 400 MiB again.
var startCacheDir, startCacheErr = os.UserCacheDir()

// DefaultDir is where Ensure keeps the binaries unless told otherwise:
// under the user's cache directory as the process started.
func DefaultDir() (string, error) {
	c, err := startCacheDir, startCacheErr
	if err != nil {
		return "", fmt.Errorf("find the cache directory for the sandbox's Kubernetes binaries: %w; set XDG_CACHE_HOME or HOME", err)
	}

	return filepath.Join(c, "ohmytalos", "kube", KubernetesVersion), nil
}

// Ensure returns the control-plane binaries, building them first when the
// cache holds none for these module versions and this Go toolchain. One
// build runs at a time across processes (a lock file in the directory);
// a second caller waits and then reuses the first one's binaries.
func Ensure(ctx context.Context, o Options) (Binaries, error) {
	goBin, err := exec.LookPath("go")
	if err != nil {
		return Binaries{}, errors.New("the sandbox's real Kubernetes control plane is built from source and needs the go command on PATH: install Go 1.26 or newer (https://go.dev/dl/), or run the sandbox without real Kubernetes")
	}

	if o.Dir == "" {
		if o.Dir, err = DefaultDir(); err != nil {
			return Binaries{}, err
		}
	}

	if err := os.MkdirAll(o.Dir, 0o755); err != nil {
		return Binaries{}, fmt.Errorf("create %s for the sandbox's Kubernetes binaries: %w; make it writable or set XDG_CACHE_HOME", o.Dir, err)
	}

	unlock, err := lockDir(ctx, filepath.Join(o.Dir, ".lock"))
	if err != nil {
		return Binaries{}, err
	}
	defer unlock()

	stamp, err := wantStamp(ctx, goBin)
	if err != nil {
		return Binaries{}, err
	}

	bins := binariesIn(o.Dir)
	if upToDate(o.Dir, stamp, bins) {
		return bins, nil
	}

	if err := build(ctx, goBin, o, readStamp(o.Dir) == ""); err != nil {
		return Binaries{}, err
	}

	if err := writeAtomic(filepath.Join(o.Dir, "stamp"), []byte(stamp)); err != nil {
		return Binaries{}, fmt.Errorf("record the sandbox's Kubernetes build: %w", err)
	}

	return bins, nil
}

func binariesIn(dir string) Binaries {
	bin := filepath.Join(dir, "bin")

	return Binaries{
		Etcd:              filepath.Join(bin, "etcd"),
		APIServer:         filepath.Join(bin, "kube-apiserver"),
		ControllerManager: filepath.Join(bin, "kube-controller-manager"),
		Scheduler:         filepath.Join(bin, "kube-scheduler"),
		Version:           KubernetesVersion,
	}
}

// build writes the tools modules into DIR/src and builds every program
// into DIR/bin. first says whether the cache held no build of these
// versions before (the progress line says "first run").
func build(ctx context.Context, goBin string, o Options, first bool) error {
	src := filepath.Join(o.Dir, "src")
	for name, files := range map[string][2][]byte{"kube": {kubeGoMod, kubeGoSum}, "etcd": {etcdGoMod, etcdGoSum}} {
		d := filepath.Join(src, name)
		if err := os.MkdirAll(d, 0o755); err != nil {
			return fmt.Errorf("prepare the %s tools module: %w", name, err)
		}

		if err := writeAtomic(filepath.Join(d, "go.mod"), files[0]); err != nil {
			return fmt.Errorf("prepare the %s tools module: %w", name, err)
		}

		if err := writeAtomic(filepath.Join(d, "go.sum"), files[1]); err != nil {
			return fmt.Errorf("prepare the %s tools module: %w", name, err)
		}
	}

	if err := os.MkdirAll(filepath.Join(o.Dir, "bin"), 0o755); err != nil {
		return fmt.Errorf("create the sandbox's Kubernetes binaries directory: %w", err)
	}

	for _, p := range programs {
		if err := buildOne(ctx, goBin, o, src, p, first); err != nil {
			return err
		}
	}

	return nil
}

func buildOne(ctx context.Context, goBin string, o Options, src string, p program, first bool) error {
	version := KubernetesVersion
	if p.name == "etcd" {
		version = EtcdVersion
	}

	if o.Progress != nil {
		why := "first run"
		if !first {
			why = "the cached build is for other versions"
		}

		o.Progress(fmt.Sprintf("building %s %s (%s, about %s)", p.name, version, why, p.about))
	}

	out := filepath.Join(o.Dir, "bin", p.name)
	tmp := out + ".tmp"
	args := []string{"build", "-trimpath", "-o", tmp}

	if p.ldflags {
		args = append(args, "-ldflags", versionLDFlags())
	}

	start := time.Now()
	cmd := exec.CommandContext(ctx, goBin, append(args, p.pkg)...)
	cmd.Dir = filepath.Join(src, p.module)
	cmd.Env = buildEnv()

	if msg, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("build %s %s for the sandbox (go build %s in %s): %w: %s; check that the Go module proxy is reachable (GOPROXY) and Go is 1.26 or newer",
			p.name, version, p.pkg, cmd.Dir, err, tail(msg))
	}

	if err := os.Rename(tmp, out); err != nil {
		return fmt.Errorf("install %s into %s: %w", p.name, out, err)
	}

	if o.Progress != nil {
		o.Progress(fmt.Sprintf("built %s %s in %s", p.name, version, time.Since(start).Round(time.Second)))
	}

	return nil
}

// versionLDFlags stamp the version the binaries report, as the Kubernetes
// release build does (kubernetes hack/lib/version.sh kube::version::ldflags
// sets the same variables in k8s.io/component-base/version and
// k8s.io/client-go/pkg/version). Without them kube-apiserver reports
// v0.0.0-master and helm refuses charts with a kubeVersion constraint.
func versionLDFlags() string {
	v := strings.TrimPrefix(KubernetesVersion, "v")
	major, minor, _ := strings.Cut(v, ".")
	minor, _, _ = strings.Cut(minor, ".")

	var flags []string

	for _, pkg := range []string{"k8s.io/component-base/version", "k8s.io/client-go/pkg/version"} {
		flags = append(flags,
			"-X "+pkg+".gitVersion="+KubernetesVersion,
			"-X "+pkg+".gitMajor="+major,
			"-X "+pkg+".gitMinor="+minor,
			"-X "+pkg+".gitTreeState=clean",
		)
	}

	return strings.Join(flags, " ")
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

func tail(b []byte) string {
	s := strings.TrimSpace(string(b))
	if len(s) > 2000 {
		s = "..." + s[len(s)-2000:]
	}

	return s
}

func writeAtomic(path string, data []byte) error {
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, data, 0o644); err != nil {
		return err
	}

	return os.Rename(tmp, path)
}
