// Package kubebin builds the real Kubernetes control-plane binaries the
// sandbox can run (etcd, kube-apiserver, kube-controller-manager,
// kube-scheduler) from the Go module proxy, once, into the user's cache, and
// reuses them afterwards. Binaries already on the machine are honoured:
// OHMYTALOS_KUBE_BIN_DIR names a directory with all four, and
// KUBEBUILDER_ASSETS (envtest's convention) one with etcd and
// kube-apiserver; each is checked against the pinned version.
//
// The modules are pinned by the nested tools modules tools/kube and
// tools/kube/etcd of this repository; their go.mod and go.sum are embedded
// here (mod/*.go.mod, mod/*.go.sum, kept equal by TestEmbeddedModulesMatch)
// so an installed ohmytalos binary can build them without the source tree.
//
// Each build records the binaries' sha256 (SHA256SUMS beside the stamp);
// Ensure and Binaries.Verify, called before every start, check them and
// rebuild a binary that no longer matches, so none runs unverified.
//
// Start runs the build in the background and reports its progress
// (Status); Ensure is Start and Wait.
package kubebin

import (
	"context"
	_ "embed" // the tools modules' go.mod and go.sum
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
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

	// want is what Verify checks each program against before it starts,
	// and o what rebuilds one that fails.
	want map[string]wanted
	o    Options
}

// Options configure Ensure and Start.
type Options struct {
	// Dir holds the binaries; default os.UserCacheDir()/ohmytalos/kube/VERSION.
	Dir string
	// Progress receives a line when the build waits for another process,
	// starts or finishes a program, and every 30 s while it compiles;
	// nil drops them.
	Progress func(string)
	// Status receives the build's state at every change (at most a few
	// times a second while it compiles), from the build's goroutine: it
	// must not block. nil drops it; Build.Status reads it at any time.
	Status func(Status)
	// Getenv reads OHMYTALOS_KUBE_BIN_DIR and KUBEBUILDER_ASSETS
	// (default os.Getenv).
	Getenv func(string) string

	// lock takes the cache's build lock (default lockDir); a test swaps it
	// to see that a verified cache never opens the lock file.
	lock func(ctx context.Context, path string, waiting func(pid int)) (func(), error)
}

// BinDirEnv names a directory holding all four binaries (etcd,
// kube-apiserver, kube-controller-manager, kube-scheduler) at the pinned
// versions: nothing is built when it is set.
const BinDirEnv = "OHMYTALOS_KUBE_BIN_DIR"

// AssetsEnv is envtest's variable (controller-runtime's setup-envtest
// prints it): a directory with etcd and kube-apiserver, used when they
// are the pinned versions; the other two programs are built.
const AssetsEnv = "KUBEBUILDER_ASSETS"

// program is one binary: its module (a tools module), its package and how
// long its first build takes on two idle cores.
type program struct {
	name, module, pkg string
	// expected is the cold build's time, measured on the project's 2-core
	// machine (docs/sandbox.md): the three Kubernetes programs build in
	// one go build, so they share one figure.
	expected time.Duration
}

// programs, with the Binaries field each fills.
var programs = []program{
	{name: "etcd", module: "etcd", pkg: "go.etcd.io/etcd/server/v3", expected: 105 * time.Second},
	{name: "kube-apiserver", module: "kube", pkg: "k8s.io/kubernetes/cmd/kube-apiserver", expected: 332 * time.Second},
	{name: "kube-controller-manager", module: "kube", pkg: "k8s.io/kubernetes/cmd/kube-controller-manager", expected: 332 * time.Second},
	{name: "kube-scheduler", module: "kube", pkg: "k8s.io/kubernetes/cmd/kube-scheduler", expected: 332 * time.Second},
}

func (p program) version() string {
	if p.name == "etcd" {
		return EtcdVersion
	}

	return KubernetesVersion
}

// path is the Binaries field of p.
func (b *Binaries) path(p program) *string {
	return map[string]*string{"etcd": &b.Etcd, "kube-apiserver": &b.APIServer,
		"kube-controller-manager": &b.ControllerManager, "kube-scheduler": &b.Scheduler}[p.name]
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
		return "", fmt.Errorf("find the cache directory for the sandbox's Kubernetes binaries: %w; set XDG_CACHE_HOME or HOME, or %s to a directory holding them", err, BinDirEnv)
	}

	return filepath.Join(c, "ohmytalos", "kube", KubernetesVersion), nil
}

// Ensure returns the control-plane binaries, building them first when
// neither the environment (BinDirEnv, AssetsEnv) nor the cache holds them
// for these module versions and this Go toolchain. One build runs at a
// time across processes (a lock file in the directory); a second caller
// waits and then reuses the first one's binaries. Cancelling ctx stops
// the build and its go and compile processes.
func Ensure(ctx context.Context, o Options) (Binaries, error) {
	b := Start(ctx, o)
	defer b.Stop()

	return b.Wait(ctx)
}

// Build is a build running in the background (Start).
type Build struct {
	o      Options
	cancel context.CancelFunc
	done   chan struct{}

	mu   sync.Mutex
	st   Status
	bins Binaries
	err  error
	// rebuilt is why each program found in the cache but not as it was
	// built was built again.
	rebuilt map[string]string
}

// Start looks for the binaries and builds what is missing in the
// background, until ctx ends or Stop.
func Start(ctx context.Context, o Options) *Build {
	if o.Getenv == nil {
		o.Getenv = os.Getenv
	}

	if o.lock == nil {
		o.lock = lockDir
	}

	ctx, cancel := context.WithCancel(ctx)
	b := &Build{o: o, cancel: cancel, done: make(chan struct{}), st: Status{Dir: o.Dir}}

	for _, p := range programs {
		b.st.Programs = append(b.st.Programs, Program{Name: p.name, Version: p.version(), Expected: p.expected})
	}

	go func() {
		defer close(b.done)
		defer cancel()

		bins, err := b.run(ctx)

		b.update(func(s *Status) {
			s.State, s.Err = Ready, err
			if err != nil {
				s.State = Failed
			}
		})
		b.mu.Lock()
		b.bins, b.err = bins, err
		b.mu.Unlock()
	}()

	return b
}

// Wait returns the binaries once the build is over, or ctx's error.
func (b *Build) Wait(ctx context.Context) (Binaries, error) {
	select {
	case <-b.done:
	case <-ctx.Done():
		return Binaries{}, fmt.Errorf("wait for the sandbox's Kubernetes binaries: %w", ctx.Err())
	}

	b.mu.Lock()
	defer b.mu.Unlock()

	return b.bins, b.err
}

// Done is closed when the build is over.
func (b *Build) Done() <-chan struct{} { return b.done }

// Stop ends the build, killing its go and compile processes, and returns
// once they are gone.
func (b *Build) Stop() {
	b.cancel()
	<-b.done
}

// Status is the build's state now.
func (b *Build) Status() Status {
	b.mu.Lock()
	defer b.mu.Unlock()

	return b.snapshotLocked()
}

func (b *Build) snapshotLocked() Status {
	s := b.st
	s.Programs = slices.Clone(s.Programs)

	for i, p := range s.Programs {
		if !p.Built && !p.Started.IsZero() {
			s.Programs[i].Elapsed = time.Since(p.Started)
		}
	}

	return s
}

// update changes the status and hands it to Options.Status.
func (b *Build) update(change func(*Status)) {
	b.mu.Lock()
	change(&b.st)
	s := b.snapshotLocked()
	b.mu.Unlock()

	if b.o.Status != nil {
		b.o.Status(s)
	}
}

func (b *Build) progress(line string) {
	if b.o.Progress != nil {
		b.o.Progress(line)
	}
}

// setProgram changes the status of the named program.
func (b *Build) setProgram(name string, change func(*Program)) {
	b.update(func(s *Status) {
		for i := range s.Programs {
			if s.Programs[i].Name == name {
				change(&s.Programs[i])
			}
		}
	})
}

// run finds or builds every program.
func (b *Build) run(ctx context.Context) (Binaries, error) {
	bins := Binaries{Version: KubernetesVersion, want: map[string]wanted{}, o: b.o}

	external, err := fromEnvironment(ctx, b.o.Getenv)
	if err != nil {
		return Binaries{}, err
	}

	var missing []program

	for _, p := range programs {
		if e, ok := external[p.name]; ok {
			*bins.path(p) = e.path
			bins.want[p.name] = wanted{from: e.from, key: e.key}
			b.setProgram(p.name, func(s *Program) { s.Built, s.From = true, e.from })

			continue
		}

		missing = append(missing, p)
	}

	if len(missing) == 0 {
		return bins, nil
	}

	built, err := b.ensureCached(ctx, missing)
	if err != nil {
		return Binaries{}, err
	}

	for _, p := range missing {
		*bins.path(p) = built[p.name].path
		bins.want[p.name] = wanted{sum: built[p.name].sum}
	}

	return bins, nil
}

// rebuiltWhy is why the build rebuilt the named program found in the
// cache, or "" when it did not.
func (b *Build) rebuiltWhy(name string) string {
	b.mu.Lock()
	defer b.mu.Unlock()

	return b.rebuilt[name]
}

// errUnwritable marks a cache directory that cannot be written.
var errUnwritable = errors.New("cannot be written")

// unwritable is the error for a cache that is incomplete and read-only;
// bads say which binaries it lacks and why.
func unwritable(dir string, bads []bad, err error) error {
	var whys []string

	for _, p := range bads {
		if p.why != "" {
			whys = append(whys, p.name+": "+p.why)
		}
	}

	what := ""
	if len(whys) > 0 {
		what = " (" + strings.Join(whys, "; ") + ")"
	}

	return fmt.Errorf("the sandbox's Kubernetes binaries are not all in %s%s, and it %w (%v): set XDG_CACHE_HOME to a writable directory, or %s to a directory that holds etcd, kube-apiserver, kube-controller-manager and kube-scheduler", dir, what, errUnwritable, err, BinDirEnv)
}

// WaitReporting is Wait, handing the status to report now and every
// interval until the build is over; it returns at once, reporting
// nothing, when the build is over already.
func (b *Build) WaitReporting(ctx context.Context, every time.Duration, report func(Status)) (Binaries, error) {
	t := time.NewTicker(every)
	defer t.Stop()

	for {
		select {
		case <-b.done:
			return b.Wait(ctx)
		default:
		}

		report(b.Status())

		select {
		case <-b.done:
		case <-t.C:
		case <-ctx.Done():
			return b.Wait(ctx)
		}
	}
}
