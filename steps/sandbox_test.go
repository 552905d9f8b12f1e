package steps

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/ohmytalos/ohmytalos/internal/engine"
	"github.com/ohmytalos/ohmytalos/internal/sandbox"
	"github.com/ohmytalos/ohmytalos/internal/testworld"
)

// world is one sandbox and a state directory: a cluster's whole outside.
type world struct{ *testworld.World }

func newWorld(t *testing.T, specPath string) *world { return &world{testworld.New(t, specPath)} }

// sandboxDeps hands a sandbox's endpoints to SandboxDeps, as cmd does.
func sandboxDeps(sb *sandbox.Sandbox, log *slog.Logger, version string) *Deps {
	return SandboxDeps(SandboxEndpoints{
		HCloudURL: sb.HCloudURL, FactoryURL: sb.FactoryURL, IPEchoURL: sb.IPEchoURL,
		Token: sb.Token, RescueSSHPort: sb.RescueSSHPort, ChartsURL: sb.ChartsURL,
	}, log, version)
}

// testLBHealthPoll is how often the tests' apply reads the ingress load
// balancer's health: their sandboxes check targets at once
// (sandbox.Options.HealthCheckScale 0), not every 15 s as Hetzner does.
const testLBHealthPoll = 100 * time.Millisecond

// testNodeTimeout bounds a test cluster's waits (--node-timeout): the real
// control plane readies its add-ons in seconds, but go test -parallel 4
// runs eight clusters at once on two cores, where one minute ran out.
// No test waits it out on purpose: those that expect a timeout set their
// own.
const testNodeTimeout = 3 * time.Minute

// deps wires fresh clients to the sandbox, as a new process would.
func (w *world) deps() *Deps {
	d := sandboxDeps(w.SB, nil, "test")
	d.PollInterval, d.NodeTimeout = 10*time.Millisecond, testNodeTimeout
	d.LBHealthPoll = testLBHealthPoll
	return d
}

// env opens the state as a new process would.
func (w *world) env(t *testing.T) *engine.Env { return w.Env(t) }

// storedSecret is the secret env's state stores under name; the test
// fails when there is none.
func storedSecret(t *testing.T, env *engine.Env, name string) []byte {
	t.Helper()
	b, err := env.State.Secret(name)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// apply runs every step in a fresh "process"; events go to sink.
func (w *world) apply(t *testing.T, ctx context.Context, sink func(engine.Event)) (*Deps, error) {
	t.Helper()
	d := w.deps()
	return d, engine.New(All(d)...).Run(ctx, w.env(t), engine.Options{Redact: d.Redact}, sink)
}
