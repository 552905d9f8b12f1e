package destroy

import (
	"context"
	"testing"
	"time"

	"github.com/ohmytalos/ohmytalos/internal/engine"
	"github.com/ohmytalos/ohmytalos/internal/testworld"
	"github.com/ohmytalos/ohmytalos/steps"
)

// world is one sandbox and a state directory: a cluster's whole outside.
type world struct{ *testworld.World }

func newWorld(t *testing.T, specPath string) *world { return &world{testworld.New(t, specPath)} }

// appliedSeed is the seed spec applied in a fresh sandbox, with the deps
// that applied it.
func appliedSeed(t *testing.T) (*world, *steps.Deps) {
	t.Helper()
	w := newWorld(t, "../../examples/seed.yaml")
	d, err := w.apply(t, context.Background(), engine.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return w, d
}

// deps wires fresh clients to the sandbox, as a new process would.
func (w *world) deps() *steps.Deps {
	d := steps.SandboxDeps(steps.SandboxEndpoints{
		HCloudURL: w.SB.HCloudURL, FactoryURL: w.SB.FactoryURL, IPEchoURL: w.SB.IPEchoURL,
		Token: w.SB.Token, RescueSSHPort: w.SB.RescueSSHPort, ChartsURL: w.SB.ChartsURL,
	}, nil, "test")
	d.PollInterval, d.NodeTimeout = 10*time.Millisecond, 3*time.Minute // as steps' testNodeTimeout
	// The sandbox checks load balancer targets at once
	// (sandbox.Options.HealthCheckScale 0), not every 15 s.
	d.LBHealthPoll = 100 * time.Millisecond
	return d
}

// env opens the state as a new process would.
func (w *world) env(t *testing.T) *engine.Env { return w.Env(t) }

// apply runs every step (or opts.Only) in a fresh "process".
func (w *world) apply(t *testing.T, ctx context.Context, opts engine.Options) (*steps.Deps, error) {
	t.Helper()
	d := w.deps()
	opts.Redact = d.Redact
	return d, engine.New(steps.All(d)...).Run(ctx, w.env(t), opts, nil)
}
