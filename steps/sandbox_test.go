package steps

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
)

// world is one sandbox and a state directory: a cluster's whole outside.
type world struct {
	sb   *sandbox.Sandbox
	dir  string
	spec *spec.Spec
}

// fastSandbox starts a sandbox whose actions finish on the next poll.
func fastSandbox(t *testing.T) *sandbox.Sandbox {
	t.Helper()
	sb, err := sandbox.Start(context.Background(), sandbox.Options{ActionDuration: 0, BootDelay: 0})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sb.Close() })
	return sb
}

func newWorld(t *testing.T, specPath string) *world {
	t.Helper()
	t.Setenv("OHMYTALOS_AGE_KEY_FILE", filepath.Join(t.TempDir(), "age.key"))
	sp, err := spec.Load(specPath)
	if err != nil {
		t.Fatal(err)
	}
	return &world{sb: fastSandbox(t), dir: t.TempDir(), spec: sp}
}

// sandboxDeps hands a sandbox's endpoints to SandboxDeps, as cmd does.
func sandboxDeps(sb *sandbox.Sandbox, log *slog.Logger, version string) *Deps {
	return SandboxDeps(SandboxEndpoints{
		HCloudURL: sb.HCloudURL, FactoryURL: sb.FactoryURL, IPEchoURL: sb.IPEchoURL,
		Token: sb.Token, RescueSSHPort: sb.RescueSSHPort,
	}, log, version)
}

// deps wires fresh clients to the sandbox, as a new process would.
func (w *world) deps() *Deps {
	d := sandboxDeps(w.sb, nil, "test")
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

// apply runs every step in a fresh "process"; events go to sink.
func (w *world) apply(t *testing.T, ctx context.Context, sink func(engine.Event)) (*Deps, error) {
	t.Helper()
	d := w.deps()
	return d, engine.New(All(d)...).Run(ctx, w.env(t), engine.Options{Redact: d.Redact}, sink)
}
