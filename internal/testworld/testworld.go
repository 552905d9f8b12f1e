// Package testworld is test support shared by the tests of steps and
// steps/destroy: a sandbox whose actions finish at once and a state
// directory, a cluster's whole outside. Only _test files import it (steps'
// TestNoProvisioningPackageImportsTheSandbox keeps it so), which is why it
// may start the sandbox; it never imports steps, so that steps' own
// (package steps) tests can use it.
package testworld

import (
	"context"
	"log/slog"
	"path/filepath"
	"testing"

	"github.com/ohmytalos/ohmytalos/internal/engine"
	"github.com/ohmytalos/ohmytalos/internal/sandbox"
	"github.com/ohmytalos/ohmytalos/internal/spec"
	"github.com/ohmytalos/ohmytalos/internal/state"
)

// World is one sandbox and a state directory for one spec.
type World struct {
	SB   *sandbox.Sandbox
	Dir  string
	Spec *spec.Spec
	// KeyFile is the state's age identity, created on first use: the
	// test's own, never the operator's. It is passed to the state, not
	// set in the environment, so that tests with worlds may run in
	// parallel (t.Setenv forbids it).
	KeyFile string
}

// FastSandbox starts a sandbox whose actions finish on the next poll; it
// closes with the test.
func FastSandbox(t testing.TB) *sandbox.Sandbox {
	t.Helper()
	sb, err := sandbox.Start(context.Background(), sandbox.Options{ActionDuration: 0, BootDelay: 0})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sb.Close() })
	return sb
}

// New loads the spec at specPath and gives it a fast sandbox, a fresh
// state directory and a fresh age key (KeyFile).
func New(t *testing.T, specPath string) *World {
	t.Helper()
	sp, err := spec.Load(specPath)
	if err != nil {
		t.Fatal(err)
	}
	return &World{SB: FastSandbox(t), Dir: t.TempDir(), Spec: sp, KeyFile: NewKeyFile(t)}
}

// NewKeyFile is where a test's age identity is created on first use.
func NewKeyFile(t testing.TB) string { return filepath.Join(t.TempDir(), "age.key") }

// Env opens the state as a new process would, with the identity in
// KeyFile.
func (w *World) Env(t testing.TB) *engine.Env {
	t.Helper()
	if w.KeyFile == "" {
		t.Fatal("testworld: World.KeyFile is empty; the state would look for the operator's own age identity")
	}
	keys, err := state.LoadKeyring([]string{w.KeyFile}, w.KeyFile)
	if err != nil {
		t.Fatal(err)
	}
	st, err := state.Open(w.Dir, w.Spec.Name, keys)
	if err != nil {
		t.Fatal(err)
	}
	return &engine.Env{Spec: w.Spec, State: st, Log: slog.New(slog.DiscardHandler)}
}

// WantSeed is what examples/seed.yaml must leave in Hetzner.
var WantSeed = map[string]int{
	"servers": 5, "networks": 1, "firewalls": 1, "load_balancers": 1, "placement_groups": 2,
	"ssh_keys": 0, "images": 2, "volumes": 0,
}

// CheckCounts fails t unless Hetzner holds what WantSeed lists and etcd
// was bootstrapped exactly once.
func (w *World) CheckCounts(t testing.TB) {
	t.Helper()
	got := w.SB.HCloud.Counts()
	for k, v := range WantSeed {
		if got[k] != v {
			t.Errorf("%s = %d, want %d (all: %v)", k, got[k], v, got)
		}
	}
	if n := w.SB.Talos.Bootstraps(w.Spec.Name); n != 1 {
		t.Errorf("etcd bootstrapped %d times, want 1", n)
	}
}
