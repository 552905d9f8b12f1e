package e2e

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ohmytalos/ohmytalos/internal/clients"
	"github.com/ohmytalos/ohmytalos/internal/cloud"
	"github.com/ohmytalos/ohmytalos/internal/engine"
	"github.com/ohmytalos/ohmytalos/internal/factory"
	"github.com/ohmytalos/ohmytalos/internal/sandbox"
	"github.com/ohmytalos/ohmytalos/internal/secrets"
	"github.com/ohmytalos/ohmytalos/internal/spec"
	"github.com/ohmytalos/ohmytalos/internal/state"
	"github.com/ohmytalos/ohmytalos/steps"
)

// seedPath is the field notes' target cluster, the spec users start from.
const seedPath = "../examples/seed.yaml"

// cluster is one spec applied in-process against one sandbox, with a
// state directory that survives between runs like a real one does.
type cluster struct {
	sb       *sandbox.Sandbox
	spec     *spec.Spec
	stateDir string
	keyFile  string
	// poll paces action, SSH and readiness polling (Deps.PollInterval).
	poll time.Duration
	// endpoint overrides the sandbox's Hetzner API URL (a proxy in front).
	endpoint string
}

// newCluster starts a sandbox with o and prepares an empty state dir.
func newCluster(tb testing.TB, sp *spec.Spec, o sandbox.Options, poll time.Duration) *cluster {
	tb.Helper()
	dir := tb.TempDir()
	o.WorkDir = filepath.Join(dir, "sandbox")
	if err := os.MkdirAll(o.WorkDir, 0o700); err != nil {
		tb.Fatal(err)
	}
	sb, err := sandbox.Start(context.Background(), o)
	if err != nil {
		tb.Fatalf("start sandbox: %v", err)
	}
	tb.Cleanup(func() { sb.Close() })
	return &cluster{sb: sb, spec: sp, stateDir: filepath.Join(dir, "state"), keyFile: filepath.Join(dir, "age.key"), poll: poll}
}

// openState opens the state as a fresh process would.
func (c *cluster) openState() (*state.Store, error) {
	keys, err := state.LoadKeyring([]string{c.keyFile}, c.keyFile)
	if err != nil {
		return nil, err
	}
	return state.Open(c.stateDir, c.spec.Name, keys)
}

// deps builds the steps' clients against the sandbox, as
// cmd/ohmytalos/runtime.go does for --sandbox; new ones per run, like a
// new process.
func (c *cluster) deps() *steps.Deps {
	token := c.sb.Token
	endpoint := c.sb.HCloudURL
	if c.endpoint != "" {
		endpoint = c.endpoint
	}
	return &steps.Deps{
		Set: &clients.Set{
			Log:            slog.New(slog.NewTextHandler(io.Discard, nil)),
			Version:        "e2e",
			Meter:          cloud.NewMeter(nil),
			FactoryURL:     c.sb.FactoryURL,
			IPEchoURL:      c.sb.IPEchoURL,
			ChartMirror:    c.sb.ChartsURL,
			HTTP:           &http.Client{Timeout: time.Minute},
			HCloudEndpoint: endpoint,
			PollInterval:   c.poll,
			Resolver: secrets.NewResolver(secrets.Options{Env: func(k string) (string, bool) {
				if k == "HCLOUD_TOKEN" {
					return token, true
				}
				return "", false
			}}),
		},
		Sandbox: true,
		SSHPort: c.sb.RescueSSHPort,
	}
}

// events collects an engine run's events.
type events struct {
	mu  sync.Mutex
	all []engine.Event
}

func (e *events) add(ev engine.Event) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.all = append(e.all, ev)
}

// actions counts resource events per action (create, reuse, ...).
func (e *events) actions() map[string]int {
	e.mu.Lock()
	defer e.mu.Unlock()
	out := map[string]int{}
	for _, ev := range e.all {
		if ev.Kind == engine.KindResource {
			out[string(ev.Action)]++
		}
	}
	return out
}

// stepTimes is each step's elapsed time, from its done event.
func (e *events) stepTimes() map[string]time.Duration {
	e.mu.Lock()
	defer e.mu.Unlock()
	out := map[string]time.Duration{}
	for _, ev := range e.all {
		if ev.Kind == engine.KindDone {
			out[string(ev.Step)] = ev.Elapsed
		}
	}
	return out
}

// timeline formats resource, done and failed events with their offset
// from start.
func (e *events) timeline(start time.Time) string {
	e.mu.Lock()
	defer e.mu.Unlock()
	var b strings.Builder
	for _, ev := range e.all {
		if ev.Kind != engine.KindResource && ev.Kind != engine.KindDone && ev.Kind != engine.KindFailed && ev.Kind != engine.KindStarted {
			continue
		}
		fmt.Fprintf(&b, "%8.3fs %-9s %-8s %-8s %s %s\n", ev.Time.Sub(start).Seconds(), ev.Step, ev.Kind, ev.Action, ev.Resource, ev.Message)
	}
	return b.String()
}

// apply runs every step once, as "ohmytalos apply" does.
func (c *cluster) apply(ctx context.Context) (*events, error) {
	st, err := c.openState()
	if err != nil {
		return nil, fmt.Errorf("open state: %w", err)
	}
	if err := st.Lock("e2e apply"); err != nil {
		return nil, err
	}
	defer st.Unlock()
	d := c.deps()
	env := &engine.Env{Spec: c.spec, State: st, Log: d.Log}
	evs := &events{}
	err = engine.New(steps.All(d)...).Run(ctx, env, engine.Options{Redact: d.Redact}, evs.add)
	return evs, err
}

// loadSeed parses examples/seed.yaml.
func loadSeed(tb testing.TB) *spec.Spec {
	tb.Helper()
	sp, err := spec.Load(seedPath)
	if err != nil {
		tb.Fatalf("load seed spec: %v", err)
	}
	return sp
}

// imageCount is how many distinct snapshots a spec needs: one per
// (schematic ID, architecture), as steps.Images builds them.
func imageCount(tb testing.TB, sp *spec.Spec) int {
	tb.Helper()
	seen := map[string]bool{}
	for _, n := range sp.Nodes() {
		_, sc := sp.SchematicFor(n.Pool)
		id, err := factory.New(sc.Extensions, sc.KernelArgs).ID()
		if err != nil {
			tb.Fatalf("schematic of %s: %v", n.Name, err)
		}
		seen[id+"/"+spec.Arch(n.ServerType)] = true
	}
	return len(seen)
}
