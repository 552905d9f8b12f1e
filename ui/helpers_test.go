package ui

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"runtime"
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
	buf := make([]byte, 64<<10)
	stack := string(buf[:runtime.Stack(buf, false)])
	if strings.Contains(stack, "ui.(*Model).Update") || strings.Contains(stack, "ui.(*Model).View") {
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

func (s *fakeStep) Name() string  { return s.name }
func (s *fakeStep) Title() string { return s.title }

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
		emit(engine.Event{Kind: engine.KindLog, Message: "token accepted by the API; ratelimit-remaining: 3598"})
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
	return nil
}

// fakeSteps are the engine's steps, in the real order.
func fakeSteps(g *guard) []*fakeStep {
	titles := [][2]string{
		{"secrets", "Look up the Hetzner token"}, {"images", "Build Talos snapshots"}, {"network", "Create the private network"},
		{"pools", "Placement groups, firewall, load balancer"}, {"configs", "Render machine configs"},
		{"servers", "Create servers"}, {"bootstrap", "Bootstrap Talos"},
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
	}
	return b, fs
}

// harness drives a root model like bubbletea does: messages go through
// Update, commands run in goroutines and their messages come back, but
// the test decides when to process them.
type harness struct {
	t       testing.TB
	g       *guard
	m       *Model
	msgs    chan tea.Msg
	done    chan struct{}
	pending atomic.Int64
	// quit is set once a command returned tea.QuitMsg.
	quit atomic.Bool
}

func newHarness(t testing.TB, o Options) (*harness, []*fakeStep) {
	g := &guard{t: t}
	b, fs := testBackend(t, g)
	h := newHarnessFor(t, g, b, o)
	return h, fs
}

func newHarnessFor(t testing.TB, g *guard, b Backend, o Options) *harness {
	o.NoColor = true
	h := &harness{t: t, g: g, m: newModel(context.Background(), b, o), msgs: make(chan tea.Msg, 256), done: make(chan struct{})}
	h.m.c.tickEvery = 5 * time.Millisecond // ticks are dropped below: do not wait for them
	t.Cleanup(func() {
		h.m.stopRuns()
		close(h.done)
	})
	h.run(h.m.Init())
	return h
}

func (h *harness) run(cmd tea.Cmd) {
	if cmd == nil {
		return
	}
	h.pending.Add(1)
	go func() {
		defer h.pending.Add(-1)
		h.deliver(cmd())
	}()
}

func (h *harness) deliver(msg tea.Msg) {
	switch m := msg.(type) {
	case nil:
		return
	case tea.BatchMsg:
		for _, c := range m {
			h.run(c)
		}
		return
	case TickMsg:
		return // elapsed-time ticks only repaint
	case tea.QuitMsg:
		h.quit.Store(true)
		return
	}
	select {
	case h.msgs <- msg:
	case <-h.done:
	}
}

// send runs msg through Update (and View), guarded against I/O.
func (h *harness) send(msg tea.Msg) {
	_, cmd := h.m.Update(msg)
	_ = h.m.View()
	h.run(cmd)
}

// key sends keys by name: "enter", "tab", "ctrl+n", or runes like "+".
func (h *harness) key(names ...string) {
	for _, n := range names {
		h.send(keyMsg(n))
	}
}

func keyMsg(n string) tea.KeyMsg {
	special := map[string]tea.KeyType{
		"enter": tea.KeyEnter, "tab": tea.KeyTab, "shift+tab": tea.KeyShiftTab, "esc": tea.KeyEsc,
		"up": tea.KeyUp, "down": tea.KeyDown, "left": tea.KeyLeft, "right": tea.KeyRight,
		"ctrl+n": tea.KeyCtrlN, "ctrl+p": tea.KeyCtrlP, "ctrl+c": tea.KeyCtrlC, "backspace": tea.KeyBackspace,
		"space": tea.KeySpace,
	}
	if k, ok := special[n]; ok {
		return tea.KeyMsg{Type: k}
	}
	return tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune(n)}
}

// typeText types a string rune by rune.
func (h *harness) typeText(s string) {
	for _, r := range s {
		h.send(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune{r}})
	}
}

// settle processes messages until no command is pending.
func (h *harness) settle() {
	h.t.Helper()
	deadline := time.After(5 * time.Second)
	for {
		select {
		case msg := <-h.msgs:
			h.send(msg)
			continue
		default:
		}
		if h.pending.Load() == 0 && len(h.msgs) == 0 {
			return
		}
		select {
		case msg := <-h.msgs:
			h.send(msg)
		case <-time.After(2 * time.Millisecond):
		case <-deadline:
			h.t.Fatalf("commands still pending after 5s")
		}
	}
}

// waitFor processes messages until cond holds.
func (h *harness) waitFor(what string, cond func() bool) {
	h.t.Helper()
	deadline := time.After(5 * time.Second)
	for !cond() {
		select {
		case msg := <-h.msgs:
			h.send(msg)
		case <-time.After(2 * time.Millisecond):
			// cond may depend on a command's result that is no message
			// (tea.QuitMsg): look again.
		case <-deadline:
			h.t.Fatalf("timed out waiting for %s; screen:\n%s", what, h.m.View())
		}
	}
}
