package kubebin

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
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

	_, err := Ensure(context.Background(), Options{Dir: t.TempDir()})
	if err == nil || !strings.Contains(err.Error(), "needs the go command on PATH") {
		t.Fatalf("Ensure without go = %v, want an error naming the go command", err)
	}
}

// fakeGo puts a go command on PATH that answers "env GOVERSION" and
// "build -o OUT ...", logging each build to log.
func fakeGo(t *testing.T, version string) (logPath string) {
	t.Helper()

	dir := t.TempDir()
	logPath = filepath.Join(dir, "builds.log")
	script := `#!/bin/sh
if [ "$1" = env ]; then echo ` + version + `; exit 0; fi
if [ "$1" = build ]; then
  out=""; prev=""
  for a in "$@"; do [ "$prev" = "-o" ] && out="$a"; prev="$a"; done
  pkg="$a"
  [ -f go.mod ] || { echo "no go.mod in $(pwd)" >&2; exit 1; }
  echo "$pkg $GOFLAGS" >> ` + logPath + `
  echo binary > "$out"; exit 0
fi
exit 2
`
	if err := os.WriteFile(filepath.Join(dir, "go"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}

	t.Setenv("PATH", dir+string(os.PathListSeparator)+os.Getenv("PATH"))

	return logPath
}

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

func TestEnsureBuildsOnceAndReuses(t *testing.T) {
	logPath := fakeGo(t, "go1.26.8")
	dir := t.TempDir()

	var progress []string

	o := Options{Dir: dir, Progress: func(s string) { progress = append(progress, s) }}

	bins, err := Ensure(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}

	if got := builds(t, logPath); len(got) != 4 || !strings.Contains(got[1], "k8s.io/kubernetes/cmd/kube-apiserver -mod=readonly") {
		t.Fatalf("first Ensure built %q, want etcd, kube-apiserver, kube-controller-manager, kube-scheduler with -mod=readonly", got)
	}

	if !strings.Contains(strings.Join(progress, "\n"), "building kube-apiserver v1.36.3 (first run, about") {
		t.Errorf("progress %q lacks the first-run line", progress)
	}

	if filepath.Base(bins.APIServer) != "kube-apiserver" || bins.Version != "v1.36.3" {
		t.Errorf("binaries = %+v", bins)
	}

	if _, err := Ensure(context.Background(), o); err != nil {
		t.Fatal(err)
	}

	if got := builds(t, logPath); len(got) != 4 {
		t.Fatalf("second Ensure rebuilt: %q", got)
	}

	// A missing binary is rebuilt, and so is everything after a Go upgrade.
	if err := os.Remove(bins.Scheduler); err != nil {
		t.Fatal(err)
	}

	if _, err := Ensure(context.Background(), o); err != nil {
		t.Fatal(err)
	}

	if got := builds(t, logPath); len(got) != 8 {
		t.Fatalf("Ensure after a removed binary built %d programs in all, want 8", len(got))
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

// Callers at once (as parallel test binaries are) build once between them.
func TestEnsureConcurrentCallersBuildOnce(t *testing.T) {
	logPath := fakeGo(t, "go1.26.8")
	dir := t.TempDir()

	var wg sync.WaitGroup

	errs := make(chan error, 4)

	for range 4 {
		wg.Go(func() {
			_, err := Ensure(context.Background(), Options{Dir: dir})
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

	if got := builds(t, logPath); len(got) != 4 {
		t.Fatalf("4 concurrent callers built %d programs, want 4", len(got))
	}
}
