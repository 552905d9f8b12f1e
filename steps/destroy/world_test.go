package destroy

import (
	"context"
	"log/slog"
	"path/filepath"
	"testing"
	"time"

	"github.com/ohmytalos/ohmytalos/internal/engine"
	"github.com/ohmytalos/ohmytalos/internal/sandbox"
	"github.com/ohmytalos/ohmytalos/internal/spec"
	"github.com/ohmytalos/ohmytalos/internal/state"
	"github.com/ohmytalos/ohmytalos/steps"
)

// world is one sandbox and a state directory: a cluster's whole outside.
type world struct {
	sb   *sandbox.Sandbox
	dir  string
	spec *spec.Spec
}

func newWorld(t *testing.T, specPath string) *world {
	t.Helper()
	t.Setenv("OHMYTALOS_AGE_KEY_FILE", filepath.Join(t.TempDir(), "age.key"))
	sp, err := spec.Load(specPath)
	if err != nil {
		t.Fatal(err)
	}
	sb, err := sandbox.Start(context.Background(), sandbox.Options{ActionDuration: 0, BootDelay: 0})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sb.Close() })
	return &world{sb: sb, dir: t.TempDir(), spec: sp}
}

// deps wires fresh clients to the sandbox, as a new process would.
func (w *world) deps() *steps.Deps {
	d := steps.SandboxDeps(steps.SandboxEndpoints{
		HCloudURL: w.sb.HCloudURL, FactoryURL: w.sb.FactoryURL, IPEchoURL: w.sb.IPEchoURL,
		Token: w.sb.Token, RescueSSHPort: w.sb.RescueSSHPort,
	}, nil, "test")
	d.PollInterval, d.NodeTimeout = 10*time.Millisecond, time.Minute
	return d
}

// env opens the state as a new process would.
func (w *world) env(t *testing.T) *engine.Env {
	t.Helper()
	keys, err := state.LoadKeyring(state.KeyFileCandidates(), state.DefaultNewKeyFile())
	if err != nil {
		t.Fatal(err)
	}
	st, err := state.Open(w.dir, w.spec.Name, keys)
	if err != nil {
		t.Fatal(err)
	}
	return &engine.Env{Spec: w.spec, State: st, Log: slog.New(slog.DiscardHandler)}
}

// apply runs every step (or opts.Only) in a fresh "process".
func (w *world) apply(t *testing.T, ctx context.Context, opts engine.Options) (*steps.Deps, error) {
	t.Helper()
	d := w.deps()
	opts.Redact = d.Redact
	return d, engine.New(steps.All(d)...).Run(ctx, w.env(t), opts, nil)
}

// wantSeed is what examples/seed.yaml must leave in Hetzner.
var wantSeed = map[string]int{
	"servers": 5, "networks": 1, "firewalls": 1, "load_balancers": 1, "placement_groups": 2,
	"ssh_keys": 0, "images": 2, "volumes": 0,
}

func checkCounts(t *testing.T, w *world) {
	t.Helper()
	got := w.sb.HCloud.Counts()
	for k, v := range wantSeed {
		if got[k] != v {
			t.Errorf("%s = %d, want %d (all: %v)", k, got[k], v, got)
		}
	}
	if n := w.sb.Talos.Bootstraps(w.spec.Name); n != 1 {
		t.Errorf("etcd bootstrapped %d times, want 1", n)
	}
}
