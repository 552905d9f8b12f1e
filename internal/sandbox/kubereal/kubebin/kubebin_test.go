package kubebin

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// The embedded copies are what an installed binary builds from: they must
// be the tools modules' go.mod and go.sum byte for byte.
func TestEmbeddedModulesMatch(t *testing.T) {
	root := filepath.Join("..", "..", "..", "..", "tools", "kube")
	for path, embedded := range map[string][]byte{
		"go.mod": kubeGoMod, "go.sum": kubeGoSum,
		"etcd/go.mod": etcdGoMod, "etcd/go.sum": etcdGoSum,
	} {
		disk, err := os.ReadFile(filepath.Join(root, path))
		if err != nil {
			t.Fatal(err)
		}

		if !bytes.Equal(disk, embedded) {
			t.Errorf("tools/kube/%s differs from its embedded copy under mod/: copy it over after go mod tidy", path)
		}
	}

	if !bytes.Contains(kubeGoMod, []byte("\tk8s.io/kubernetes "+KubernetesVersion)) {
		t.Errorf("tools/kube/go.mod does not require k8s.io/kubernetes %s", KubernetesVersion)
	}

	if !bytes.Contains(etcdGoMod, []byte("\tgo.etcd.io/etcd/server/v3 "+EtcdVersion)) {
		t.Errorf("tools/kube/etcd/go.mod does not require etcd %s", EtcdVersion)
	}
}

func TestVersionLDFlags(t *testing.T) {
	got := versionLDFlags()
	for _, want := range []string{
		"-X k8s.io/component-base/version.gitVersion=v1.36.3",
		"-X k8s.io/component-base/version.gitMajor=1",
		"-X k8s.io/component-base/version.gitMinor=36",
		"-X k8s.io/client-go/pkg/version.gitVersion=v1.36.3",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("ldflags %q lack %q", got, want)
		}
	}
}

func TestEnsureWithoutGo(t *testing.T) {
	t.Setenv("PATH", t.TempDir())

	_, err := Ensure(context.Background(), Options{Dir: t.TempDir(), Getenv: noEnv})
	if err == nil || !strings.Contains(err.Error(), "needs the go command on PATH") {
		t.Fatalf("Ensure without go = %v, want an error naming the go command", err)
	}
}

// fakeGo puts a go command on PATH that answers "env GOVERSION", "list"
// (each package depends on dep/a and dep/b) and "build -v -o OUT PKG...",
// printing each package as go build -v does and logging each build (its
// packages and GOFLAGS) as one line of log. With FAKE_GO_FAIL set, build
// prints it and fails; with FAKE_GO_HANG set to a file, build starts a
// child that sleeps, writes the child's PID there and waits. Each binary
// built holds "binary PKG".
func fakeGo(t *testing.T, version string) (logPath string) {
	t.Helper()

	dir := t.TempDir()
	logPath = filepath.Join(dir, "builds.log")
	script := `#!/bin/sh
case "$1" in
env) echo ` + version + `; exit 0 ;;
list) shift 3; for p in "$@"; do echo "$p dep/a dep/b"; done; exit 0 ;;
build) ;;
*) exit 2 ;;
esac
[ -f go.mod ] || { echo "no go.mod in $(pwd)" >&2; exit 1; }
if [ -n "$FAKE_GO_FAIL" ]; then echo "$FAKE_GO_FAIL" >&2; exit 1; fi
if [ -n "$FAKE_GO_HANG" ]; then sleep 600 & echo $! > "$FAKE_GO_HANG"; wait; fi
out=""; skip=""; pkgs=""
shift
for a in "$@"; do
  if [ -n "$skip" ]; then [ "$skip" = o ] && out="$a"; skip=""; continue; fi
  case "$a" in -o) skip=o ;; -ldflags) skip=l ;; -*) ;; *) pkgs="$pkgs $a" ;; esac
done
echo "${pkgs# } $GOFLAGS" >> ` + logPath + `
for p in $pkgs; do
  echo dep/a >&2; echo dep/b >&2; echo "$p" >&2
  case "$out" in */) echo "binary $p" > "$out$(basename "$p")" ;; *) echo "binary $p" > "$out" ;; esac
done
`
	if err := os.WriteFile(filepath.Join(dir, "go"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}

	t.Setenv("PATH", dir+string(os.PathListSeparator)+os.Getenv("PATH"))

	return logPath
}

// builds are the go build invocations logged, one line each.
func builds(t *testing.T, logPath string) []string {
	t.Helper()

	b, err := os.ReadFile(logPath)
	if os.IsNotExist(err) {
		return nil
	}

	if err != nil {
		t.Fatal(err)
	}

	return strings.Split(strings.TrimSpace(string(b)), "\n")
}

// noEnv is an Options.Getenv naming no prebuilt binaries.
func noEnv(string) string { return "" }

func TestEnsureBuildsOnceAndReuses(t *testing.T) {
	logPath := fakeGo(t, "go1.26.8")
	dir := t.TempDir()

	var progress []string

	var mu sync.Mutex

	// Both go builds report at once; Ensure returns after them.
	o := Options{Dir: dir, Getenv: noEnv, Progress: func(s string) { mu.Lock(); progress = append(progress, s); mu.Unlock() }}

	bins, err := Ensure(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}

	// The three Kubernetes programs share one go build; etcd has its own.
	got := builds(t, logPath)
	slices.Sort(got)
	want := []string{
		"go.etcd.io/etcd/server/v3 -mod=readonly",
		"k8s.io/kubernetes/cmd/kube-apiserver k8s.io/kubernetes/cmd/kube-controller-manager k8s.io/kubernetes/cmd/kube-scheduler -mod=readonly",
	}
	if !slices.Equal(got, want) {
		t.Fatalf("first Ensure ran go build for %q, want %q", got, want)
	}

	if !strings.Contains(strings.Join(progress, "\n"), "building kube-apiserver v1.36.3 (first run, about") {
		t.Errorf("progress %q lacks the first-run line", progress)
	}

	if filepath.Base(bins.APIServer) != "kube-apiserver" || filepath.Base(bins.Etcd) != "etcd" || bins.Version != "v1.36.3" {
		t.Errorf("binaries = %+v", bins)
	}

	if _, err := Ensure(context.Background(), o); err != nil {
		t.Fatal(err)
	}

	if got := builds(t, logPath); len(got) != 2 {
		t.Fatalf("second Ensure rebuilt: %q", got)
	}

	// A missing binary is rebuilt alone, and everything after a Go upgrade.
	if err := os.Remove(bins.Scheduler); err != nil {
		t.Fatal(err)
	}

	if _, err := Ensure(context.Background(), o); err != nil {
		t.Fatal(err)
	}

	if got := builds(t, logPath); len(got) != 3 || got[2] != "k8s.io/kubernetes/cmd/kube-scheduler -mod=readonly" {
		t.Fatalf("Ensure after a removed kube-scheduler built %q, want kube-scheduler alone last", got)
	}

	fakeGo(t, "go1.27.0")

	progress = nil
	if _, err := Ensure(context.Background(), o); err != nil {
		t.Fatal(err)
	}

	if !strings.Contains(strings.Join(progress, "\n"), "the cached build is for other versions") {
		t.Errorf("progress after a Go upgrade %q does not say why it rebuilds", progress)
	}
}

// The status counts the packages go build -v reports for each program.
func TestStatusCountsCompiledPackages(t *testing.T) {
	fakeGo(t, "go1.26.8")

	b := Start(context.Background(), Options{Dir: t.TempDir(), Getenv: noEnv})
	if _, err := b.Wait(context.Background()); err != nil {
		t.Fatal(err)
	}

	st := b.Status()
	if st.State != Ready || len(st.Programs) != 4 {
		t.Fatalf("status = %+v, want ready with four programs", st)
	}

	for _, p := range st.Programs {
		// dep/a, dep/b and the program's own package.
		if !p.Built || p.Packages != 3 || p.Compiled != 3 || p.Fraction() != 1 || p.From != "" {
			t.Errorf("program %+v, want built, 3 of 3 packages", p)
		}
	}
}

// Callers at once (as parallel test binaries are) build once between them.
func TestEnsureConcurrentCallersBuildOnce(t *testing.T) {
	logPath := fakeGo(t, "go1.26.8")
	dir := t.TempDir()

	var wg sync.WaitGroup

	errs := make(chan error, 4)

	for range 4 {
		wg.Go(func() {
			_, err := Ensure(context.Background(), Options{Dir: dir, Getenv: noEnv})
			errs <- err
		})
	}

	wg.Wait()
	close(errs)

	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}

	if got := builds(t, logPath); len(got) != 2 {
		t.Fatalf("4 concurrent callers ran %d builds, want 2 (etcd, and the Kubernetes programs)", len(got))
	}
}

// A build held by another process is waited for, and the status names it.
func TestWaitingNamesTheBuildingProcess(t *testing.T) {
	fakeGo(t, "go1.26.8")
	dir := t.TempDir()

	if err := os.MkdirAll(filepath.Join(dir, "bin"), 0o755); err != nil {
		t.Fatal(err)
	}

	unlock, err := lockDir(context.Background(), filepath.Join(dir, ".lock"), nil)
	if err != nil {
		t.Fatal(err)
	}

	waiting := make(chan Status, 1)

	var progress []string

	var mu sync.Mutex

	b := Start(context.Background(), Options{Dir: dir, Getenv: noEnv,
		Progress: func(s string) { mu.Lock(); progress = append(progress, s); mu.Unlock() },
		Status: func(s Status) {
			if s.State == Waiting {
				select {
				case waiting <- s:
				default:
				}
			}
		}})

	select {
	case s := <-waiting:
		want := fmt.Sprintf("waiting for PID %d, which is building the sandbox's Kubernetes binaries", os.Getpid())
		if s.HolderPID != os.Getpid() || !strings.HasPrefix(s.Headline(), want) {
			t.Errorf("waiting status = %d %q, want PID %d and %q", s.HolderPID, s.Headline(), os.Getpid(), want)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no waiting status within 10 s while another holder has the lock")
	}

	unlock()

	if _, err := b.Wait(context.Background()); err != nil {
		t.Fatal(err)
	}

	mu.Lock()
	defer mu.Unlock()

	if !strings.Contains(strings.Join(progress, "\n"), fmt.Sprintf("waiting for PID %d", os.Getpid())) {
		t.Errorf("progress %q does not say whom it waited for", progress)
	}
}

// Stop kills go build and everything it started.
func TestStopKillsTheBuildProcesses(t *testing.T) {
	fakeGo(t, "go1.26.8")

	pidFile := filepath.Join(t.TempDir(), "child.pid")
	t.Setenv("FAKE_GO_HANG", pidFile)

	b := Start(context.Background(), Options{Dir: t.TempDir(), Getenv: noEnv})

	var pid int

	for deadline := time.Now().Add(10 * time.Second); pid == 0; {
		if time.Now().After(deadline) {
			t.Fatal("the fake go build did not start its child within 10 s")
		}

		if data, err := os.ReadFile(pidFile); err == nil {
			pid, _ = strconv.Atoi(strings.TrimSpace(string(data)))
		}

		time.Sleep(20 * time.Millisecond)
	}

	b.Stop()

	if _, err := b.Wait(context.Background()); err == nil || !strings.Contains(err.Error(), "stopped") {
		t.Errorf("Wait after Stop = %v, want a stopped error", err)
	}

	for deadline := time.Now().Add(5 * time.Second); alive(pid); {
		if time.Now().After(deadline) {
			t.Fatalf("process %d that go build started is still running after Stop", pid)
		}

		time.Sleep(20 * time.Millisecond)
	}
}

// alive says whether pid runs (a zombie does not count).
func alive(pid int) bool {
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}

	_, rest, _ := strings.Cut(string(stat), ") ")

	return !strings.HasPrefix(rest, "Z")
}

// A failed build shows go's last lines and the fix.
func TestBuildFailureShowsTheOutputAndTheFix(t *testing.T) {
	fakeGo(t, "go1.26.8")
	t.Setenv("FAKE_GO_FAIL", "go: k8s.io/api@v0.36.3: Get \"https://proxy.golang.org/k8s.io/api/@v/v0.36.3.zip\": dial tcp: lookup proxy.golang.org: no such host")

	b := Start(context.Background(), Options{Dir: t.TempDir(), Getenv: noEnv})

	_, err := b.Wait(context.Background())
	if err == nil {
		t.Fatal("a failing go build passed")
	}

	for _, want := range []string{"lookup proxy.golang.org: no such host", "no network to the Go module proxy", BinDirEnv} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q lacks %q", err, want)
		}
	}

	if st := b.Status(); st.State != Failed || !strings.Contains(st.Headline(), "no network to the Go module proxy") {
		t.Errorf("status after the failure = %v %q", st.State, st.Headline())
	}
}

// fakeBinary writes a program that prints version for --version.
func fakeBinary(t *testing.T, dir, name, version string) {
	t.Helper()

	if err := os.WriteFile(filepath.Join(dir, name), []byte("#!/bin/sh\necho '"+version+"'\n"), 0o755); err != nil {
		t.Fatal(err)
	}
}

func TestBinariesFromTheEnvironment(t *testing.T) {
	logPath := fakeGo(t, "go1.26.8")
	bin := t.TempDir()
	fakeBinary(t, bin, "etcd", "etcd Version: 3.6.16\nGit SHA: x")
	fakeBinary(t, bin, "kube-apiserver", "Kubernetes v1.36.3")
	fakeBinary(t, bin, "kube-controller-manager", "Kubernetes v1.36.3")
	fakeBinary(t, bin, "kube-scheduler", "Kubernetes v1.36.3")

	env := func(vars map[string]string) func(string) string { return func(k string) string { return vars[k] } }

	t.Run("all four from "+BinDirEnv, func(t *testing.T) {
		b := Start(context.Background(), Options{Dir: t.TempDir(), Getenv: env(map[string]string{BinDirEnv: bin})})

		bins, err := b.Wait(context.Background())
		if err != nil {
			t.Fatal(err)
		}

		if bins.Scheduler != filepath.Join(bin, "kube-scheduler") || bins.Etcd != filepath.Join(bin, "etcd") {
			t.Errorf("binaries = %+v, want those in %s", bins, bin)
		}

		if got := builds(t, logPath); len(got) != 0 {
			t.Errorf("built %q with every binary given", got)
		}

		if p := b.Status().Programs[1]; p.From != BinDirEnv+"="+bin || !strings.Contains(p.Line(), "from "+BinDirEnv) {
			t.Errorf("kube-apiserver's status = %+v %q", p, p.Line())
		}
	})

	t.Run("etcd and kube-apiserver from "+AssetsEnv, func(t *testing.T) {
		bins, err := Ensure(context.Background(), Options{Dir: t.TempDir(), Getenv: env(map[string]string{AssetsEnv: bin})})
		if err != nil {
			t.Fatal(err)
		}

		if bins.APIServer != filepath.Join(bin, "kube-apiserver") || bins.Scheduler == filepath.Join(bin, "kube-scheduler") {
			t.Errorf("binaries = %+v, want etcd and kube-apiserver from %s only", bins, bin)
		}

		if got := builds(t, logPath); len(got) != 1 || got[0] != "k8s.io/kubernetes/cmd/kube-controller-manager k8s.io/kubernetes/cmd/kube-scheduler -mod=readonly" {
			t.Errorf("built %q, want kube-controller-manager and kube-scheduler alone", got)
		}
	})

	t.Run("another version is refused", func(t *testing.T) {
		old := t.TempDir()
		fakeBinary(t, old, "etcd", "etcd Version: 3.6.16")
		fakeBinary(t, old, "kube-apiserver", "Kubernetes v1.35.0")

		_, err := Ensure(context.Background(), Options{Dir: t.TempDir(), Getenv: env(map[string]string{AssetsEnv: old})})
		for _, want := range []string{AssetsEnv + "=" + old, `reports "Kubernetes v1.35.0", the sandbox needs "Kubernetes v1.36.3"`, "unset it"} {
			if err == nil || !strings.Contains(err.Error(), want) {
				t.Errorf("error = %v, want it to contain %q", err, want)
			}
		}
	})

	t.Run("a missing binary is named", func(t *testing.T) {
		empty := t.TempDir()

		_, err := Ensure(context.Background(), Options{Dir: t.TempDir(), Getenv: env(map[string]string{BinDirEnv: empty})})
		if err == nil || !strings.Contains(err.Error(), BinDirEnv+"="+empty+": no etcd there") {
			t.Errorf("error = %v, want it to name the missing etcd", err)
		}
	})
}

// A complete cache is used without the lock (so a read-only one works); an
// incomplete one that cannot be written is one error naming the directory
// and the variables.
func TestCacheThatCannotBeWritten(t *testing.T) {
	fakeGo(t, "go1.26.8")
	dir := t.TempDir()

	if _, err := Ensure(context.Background(), Options{Dir: dir, Getenv: noEnv}); err != nil {
		t.Fatal(err)
	}

	if err := os.Remove(filepath.Join(dir, ".lock")); err != nil {
		t.Fatal(err)
	}

	if _, err := Ensure(context.Background(), Options{Dir: dir, Getenv: noEnv}); err != nil {
		t.Fatal(err)
	}

	if _, err := os.Stat(filepath.Join(dir, ".lock")); !os.IsNotExist(err) {
		t.Errorf("a complete cache took the lock (stat .lock: %v)", err)
	}

	// A directory below a regular file cannot be created, even by root.
	file := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}

	bad := filepath.Join(file, "kube")

	_, err := Ensure(context.Background(), Options{Dir: bad, Getenv: noEnv})
	for _, want := range []string{"not all in " + bad, "cannot be written", "XDG_CACHE_HOME", BinDirEnv} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("error = %v, want it to contain %q", err, want)
		}
	}
}

func TestProgramLine(t *testing.T) {
	start := time.Now().Add(-130 * time.Second)
	for _, c := range []struct {
		p    Program
		want string
	}{
		{Program{Name: "kube-apiserver", Version: "v1.36.3", Expected: 6 * time.Minute}, "kube-apiserver v1.36.3: to build (about 6m)"},
		{Program{Name: "kube-apiserver", Version: "v1.36.3", Expected: 390 * time.Second, Started: start, Elapsed: 130 * time.Second, Compiled: 812, Packages: 2030},
			"kube-apiserver v1.36.3: 812 of 2030 packages, 2m10s of about 6m30s"},
		{Program{Name: "etcd", Version: "v3.6.16", Expected: 90 * time.Second, Started: start, Elapsed: 100 * time.Second, Compiled: 9, Packages: 9},
			"etcd v3.6.16: linking, 1m40s of about 1m30s"},
		{Program{Name: "etcd", Version: "v3.6.16", Built: true, Elapsed: 61 * time.Second}, "etcd v3.6.16: built in 1m1s"},
	} {
		if got := c.p.Line(); got != c.want {
			t.Errorf("Line() = %q, want %q", got, c.want)
		}
	}
}

// WaitReporting reports while the build runs, and nothing once it is over.
func TestWaitReporting(t *testing.T) {
	fakeGo(t, "go1.26.8")

	pidFile := filepath.Join(t.TempDir(), "child.pid")
	t.Setenv("FAKE_GO_HANG", pidFile)

	b := Start(context.Background(), Options{Dir: t.TempDir(), Getenv: noEnv})
	reports := make(chan Status, 100)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()

	go func() {
		for s := range reports {
			if s.State == Building {
				b.Stop()
				return
			}
		}
	}()

	_, err := b.WaitReporting(ctx, 10*time.Millisecond, func(s Status) { reports <- s })
	if err == nil || !strings.Contains(err.Error(), "stopped") {
		t.Fatalf("WaitReporting on a stopped build = %v, want the stop", err)
	}

	called := false
	if _, err := b.WaitReporting(ctx, time.Millisecond, func(Status) { called = true }); err == nil || called {
		t.Errorf("WaitReporting on a build that is over reported (%v) or passed (%v)", called, err)
	}
}

// TestFastCompileKeepsTheUsersGOGC: the cold build's compile levers are
// flags the go command takes, and GOGC=400 only where the user set none.
func TestFastCompileKeepsTheUsersGOGC(t *testing.T) {
	if got := strings.Join(fastCompile(), " "); !strings.Contains(got, "-gcflags=all=-dwarf=false") || !strings.Contains(got, "-p=") {
		t.Errorf("fastCompile() = %q", got)
	}
	t.Setenv("GOGC", "150")
	if got := compileGOGC(); got != nil {
		t.Errorf("with the user's GOGC=150: %q, want nothing added", got)
	}
}
