package ui

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/ohmytalos/ohmytalos/internal/engine"
	"github.com/ohmytalos/ohmytalos/internal/factory"
	"github.com/ohmytalos/ohmytalos/internal/pricing"
	"github.com/ohmytalos/ohmytalos/internal/spec"
	"github.com/ohmytalos/ohmytalos/internal/state"
	"github.com/ohmytalos/ohmytalos/ui/internal/testloop"
)

// guard notices I/O done from inside Update or View: every backend
// function and fake step checks whether its own call stack passes through
// the root model's Update or View.
type guard struct {
	t testing.TB
	// calls counts backend and step calls by name.
	mu    sync.Mutex
	calls map[string]int
}

func (g *guard) io(name string) {
	if stack, inside := testloop.InUpdateOrView("ui.(*Model)"); inside {
		g.t.Errorf("%s was called from Update or View: I/O must run in a tea.Cmd\n%s", name, stack)
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.calls == nil {
		g.calls = map[string]int{}
	}
	g.calls[name]++
}

func (g *guard) count(name string) int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.calls[name]
}

// fakeStep is an engine step that emits the events a real step of the
// same name emits, records its resources in the state, and reuses them
// on a second run.
type fakeStep struct {
	name, title string
	g           *guard
	// failOnce makes the first Apply fail after its first resource.
	failOnce atomic.Bool
}

func (s *fakeStep) Name() engine.StepName { return engine.StepName(s.name) }
func (s *fakeStep) Title() string         { return s.title }

// resources lists what the step creates for the spec.
func (s *fakeStep) resources(sp *spec.Spec) []string {
	switch s.name {
	case "secrets":
		return nil
	case "images":
		var out []string
		for _, im := range neededImages(sp) {
			out = append(out, "image/"+im.String())
		}
		return out
	case "network":
		out := []string{"network/" + sp.Name, "subnet/" + sp.ControlPlane.Subnet}
		for _, p := range sp.Pools {
			out = append(out, "subnet/"+p.Subnet)
		}
		return out
	case "pools":
		return []string{"placement-group/" + sp.Name + "-cp", "firewall/" + sp.Name, "load-balancer/" + sp.Name + "-ingress"}
	case "configs", "servers":
		var out []string
		for _, n := range sp.Nodes() {
			prefix := "config/"
			if s.name == "servers" {
				prefix = "server/"
			}
			out = append(out, prefix+n.Name)
		}
		return out
	case "bootstrap":
		return []string{"etcd/" + sp.Name, "kubeconfig/" + sp.Name}
	case "addons":
		return []string{"addon/cilium", "addon/hcloud-ccm", "addon/hcloud-csi"}
	}
	return nil
}

func (s *fakeStep) Plan(ctx context.Context, env *engine.Env) (engine.Plan, error) {
	s.g.io("plan " + s.name)
	p := engine.Plan{}
	for _, r := range s.resources(env.Spec) {
		action := engine.ActionCreate
		if _, ok := env.State.Resource(r); ok {
			action = engine.ActionReuse
		}
		kind, name, _ := strings.Cut(r, "/")
		p.Items = append(p.Items, engine.PlanItem{Action: action, Kind: kind, Name: name})
	}
	return p, nil
}

func (s *fakeStep) Apply(ctx context.Context, env *engine.Env, emit engine.Emit) error {
	s.g.io("apply " + s.name)
	if s.name == "secrets" {
		ref := env.Spec.Secrets.HCloudToken
		emit(engine.Event{Kind: engine.KindProgress, Message: fmt.Sprintf("looking up %s:%s", ref.Provider, ref.Ref)})
		emit(engine.Event{Kind: engine.KindLog, Message: "token found (64 characters)"})
		emit(engine.Event{Kind: engine.KindLog, Message: "token accepted by the API; ratelimit-remaining: 3598", RateLimit: &engine.RateLimit{Remaining: 3598, Limit: 3600}})
		return nil
	}
	for i, r := range s.resources(env.Spec) {
		if err := ctx.Err(); err != nil {
			return err
		}
		if _, ok := env.State.Resource(r); ok {
			emit(engine.Event{Kind: engine.KindResource, Action: engine.ActionReuse, Resource: r})
			continue
		}
		if s.name == "images" || s.name == "servers" {
			const total = 300 << 20
			for _, f := range []float64{0.25, 0.5, 1} {
				emit(engine.Event{Kind: engine.KindProgress, Resource: r, Message: "writing image", Fraction: f, Bytes: int64(f * total), Total: total})
			}
		}
		if err := env.State.PutResource(r, state.Resource{Kind: s.name, Name: r, Step: s.name, ID: int64(i + 1)}); err != nil {
			return err
		}
		emit(engine.Event{Kind: engine.KindResource, Action: engine.ActionCreate, Resource: r, ID: int64(i + 1)})
		if i == 0 && s.failOnce.CompareAndSwap(true, false) {
			return errors.New("server type cpx32 is not orderable in nbg1 right now; try again or pick cpx42")
		}
	}
	if s.name == "bootstrap" {
		emit(engine.Event{Kind: engine.KindLog, Message: "etcd is healthy on " + env.Spec.Name + "-cp-1"})
	}
	if s.name == "addons" {
		// As steps.Addons' wait reports it: each node, then the summary.
		nodes := env.Spec.Nodes()
		for i, n := range nodes {
			emit(engine.Event{Kind: engine.KindProgress, Resource: "node/" + n.Name, Fraction: 1, Message: fmt.Sprintf("Ready, provider ID hcloud://%d", i+1)})
		}
		emit(engine.Event{Kind: engine.KindProgress, Resource: "nodes", Fraction: 1,
			Message: fmt.Sprintf("%d/%d nodes Ready, %d with a provider ID, 5/5 add-on workloads ready", len(nodes), len(nodes), len(nodes))})
	}
	return nil
}

// fakeSteps are the engine's steps, in the real order.
func fakeSteps(g *guard) []*fakeStep {
	titles := [][2]string{
		{"secrets", "Look up the Hetzner token"}, {"images", "Build Talos snapshots"}, {"network", "Create the private network"},
		{"pools", "Placement groups, firewall, load balancer"}, {"configs", "Render machine configs"},
		{"servers", "Create servers"}, {"bootstrap", "Bootstrap Talos"}, {"addons", "Add-ons: Cilium, Hetzner CCM and CSI"},
	}
	var out []*fakeStep
	for _, t := range titles {
		out = append(out, &fakeStep{name: t[0], title: t[1], g: g})
	}
	return out
}

// testExtensions is what the fake factory lists.
func testExtensions() []factory.Extension {
	return []factory.Extension{
		{Name: "siderolabs/tailscale", Description: "Tailscale VPN"},
		{Name: "siderolabs/iscsi-tools", Description: "iSCSI tools for Longhorn"},
		{Name: "siderolabs/util-linux-tools", Description: "util-linux tools"},
		{Name: "siderolabs/qemu-guest-agent", Description: "QEMU guest agent"},
	}
}

// testVersions is what the fake factory lists, oldest first as
// factory.talos.dev answers, with pre-releases mixed in.
func testVersions() []string {
	return []string{"v1.12.6", "v1.13.0-beta.0", "v1.13.0", "v1.13.9", "v1.14.0-alpha.1"}
}

// testBackend wires the real engine over fake steps, a state in a
// temporary folder (the test's working folder), the offline catalog and a
// fixed extension list.
func testBackend(t testing.TB, g *guard) (Backend, []*fakeStep) {
	t.Helper()
	dir := t.TempDir()
	if tt, ok := t.(interface{ Chdir(string) }); ok {
		tt.Chdir(dir)
	}
	st, err := state.Open(filepath.Join(".ohmytalos", "demo"), "demo", nil)
	if err != nil {
		t.Fatal(err)
	}
	fs := fakeSteps(g)
	steps := make([]engine.Step, len(fs))
	for i, s := range fs {
		steps[i] = s
	}
	cat, err := pricing.Offline()
	if err != nil {
		t.Fatal(err)
	}
	b := Backend{
		Engine:   engine.New(steps...),
		Env:      &engine.Env{Spec: spec.Default("demo"), State: st},
		SpecPath: "ohmytalos.yaml",
		Sandbox:  true,
		LogPath:  ".ohmytalos/ohmytalos.log",
		Catalog: func(ctx context.Context) (*pricing.Catalog, error) {
			g.io("catalog")
			return cat, nil
		},
		Extensions: func(ctx context.Context, v string) ([]factory.Extension, error) {
			g.io("extensions")
			return testExtensions(), nil
		},
		Versions: func(ctx context.Context) ([]string, error) {
			g.io("versions")
			return testVersions(), nil
		},
	}
	return b, fs
}

// harness drives a root model through a testloop.Loop: the test decides
// when the messages of commands are processed.
type harness struct {
	*testloop.Loop
	t testing.TB
	g *guard
	m *Model
}

func newHarness(t testing.TB, o Options) (*harness, []*fakeStep) {
	g := &guard{t: t}
	b, fs := testBackend(t, g)
	h := newHarnessFor(t, g, b, o)
	return h, fs
}

// guardedBackend is testBackend with a new guard of t, for a test that
// changes the backend before it builds the harness (newHarnessFor).
func guardedBackend(t testing.TB) (*guard, Backend) {
	t.Helper()
	g := &guard{t: t}
	b, _ := testBackend(t, g)
	return g, b
}

func newHarnessFor(t testing.TB, g *guard, b Backend, o Options) *harness {
	o.NoColor = true
	m := newModel(context.Background(), b, o)
	m.tickEvery = 5 * time.Millisecond // ticks are dropped below: do not wait for them
	h := &harness{Loop: testloop.New(t, m, isTick), t: t, g: g, m: m}
	t.Cleanup(m.stopRuns)
	h.Run(m.Init())
	return h
}

// isTick says msg is an elapsed-time tick: ticks only repaint.
func isTick(msg tea.Msg) bool {
	_, ok := msg.(TickMsg)
	return ok
}

// keyMsg is the key message of a key name (see testloop.KeyMsg).
func keyMsg(n string) tea.KeyMsg { return testloop.KeyMsg(n) }

// typeText types a string rune by rune.
func (h *harness) typeText(s string) {
	for _, r := range s {
		h.Send(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune{r}})
	}
}
