package kubereal_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"testing"
	"time"

	"github.com/ohmytalos/ohmytalos/internal/sandbox/kubereal/kubebin"
)

// The binaries are built once per test binary run (and reused from the
// user's cache by later runs).
var (
	bins     kubebin.Binaries
	binsErr  error
	noGoSkip bool
)

func TestMain(m *testing.M) {
	if _, err := exec.LookPath("go"); err != nil {
		noGoSkip = true
	} else {
		ctx, cancel := context.WithTimeout(context.Background(), 25*time.Minute)
		start := time.Now()
		bins, binsErr = kubebin.Ensure(ctx, kubebin.Options{Progress: func(s string) { fmt.Fprintln(os.Stderr, "kubebin:", s) }})
		cancel()
		fmt.Fprintf(os.Stderr, "kubebin: binaries ready in %s\n", time.Since(start).Round(time.Millisecond))
	}

	os.Exit(m.Run())
}

// binaries skips without go on PATH and fails when the build failed.
func binaries(t *testing.T) kubebin.Binaries {
	t.Helper()

	if noGoSkip {
		t.Skip("the real Kubernetes control plane is built from source: no go command on PATH")
	}

	if binsErr != nil {
		t.Fatal(binsErr)
	}

	return bins
}
