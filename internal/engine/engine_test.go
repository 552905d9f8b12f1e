package engine

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ohmytalos/ohmytalos/internal/spec"
	"github.com/ohmytalos/ohmytalos/internal/state"
)

// world is a stand-in for the outside: what exists and how often each
// thing was created.
type world struct {
	created map[string]int
	failAt  string // resource key at whose checkpoint Apply is interrupted
	cancel  context.CancelFunc
}

// testStep creates its resources one by one, idempotently: it looks up the
// state first, and checkpoints after each creation.
type testStep struct {
	name string
	res  []string
	w    *world
}

func (s *testStep) Name() StepName { return StepName(s.name) }
func (s *testStep) Title() string  { return "step " + s.name }
func (s *testStep) Plan(ctx context.Context, env *Env) (Plan, error) {
	p := Plan{}
	for _, r := range s.res {
		action := ActionCreate
		if _, ok := env.State.Resource(r); ok {
			action = ActionReuse
		}
		p.Items = append(p.Items, PlanItem{Action: action, Kind: "thing", Name: r})
	}
	return p, nil
}
func (s *testStep) Apply(ctx context.Context, env *Env, emit Emit) error {
	for _, r := range s.res {
		if _, ok := env.State.Resource(r); ok {
			emit(Event{Kind: KindResource, Action: ActionReuse, Resource: r})
			continue
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		s.w.created[r]++
		if err := env.State.PutResource(r, state.Resource{Kind: "thing", Name: r, Step: s.name}); err != nil {
			return err
		}
		emit(Event{Kind: KindResource, Action: ActionCreate, Resource: r})
		if s.w.failAt == r {
			s.w.cancel()
		}
	}
	return nil
}

func newEnv(t *testing.T, dir string) *Env {
	st, err := state.Open(dir, "demo", nil)
	if err != nil {
		t.Fatal(err)
	}
	return &Env{Spec: spec.Default("demo"), State: st}
}

func steps(w *world) []Step {
	return []Step{
		&testStep{"network", []string{"net", "subnet-a", "subnet-b"}, w},
		&testStep{"servers", []string{"cp-1", "cp-2"}, w},
		&testStep{"bootstrap", []string{"etcd"}, w},
	}
}

// TestResumeFromEveryCheckpoint interrupts the run after each resource is
// checkpointed, resumes it, and checks every resource exists exactly once.
func TestResumeFromEveryCheckpoint(t *testing.T) {
	all := []string{"net", "subnet-a", "subnet-b", "cp-1", "cp-2", "etcd"}
	for _, at := range all {
		t.Run(at, func(t *testing.T) {
			dir := t.TempDir()
			w := &world{created: map[string]int{}, failAt: at}
			ctx, cancel := context.WithCancel(context.Background())
			w.cancel = cancel
			e := New(steps(w)...)
			err := e.Run(ctx, newEnv(t, dir), Options{}, nil)
			if at != "etcd" && !errors.Is(err, ErrInterrupted) {
				t.Fatalf("first run err = %v, want interrupted", err)
			}
			// A new process: fresh store from disk.
			w.failAt = ""
			var events []Event
			if err := e.Run(context.Background(), newEnv(t, dir), Options{}, func(ev Event) { events = append(events, ev) }); err != nil {
				t.Fatalf("resume: %v", err)
			}
			for _, r := range all {
				if w.created[r] != 1 {
					t.Errorf("%s created %d times", r, w.created[r])
				}
			}
			st := newEnv(t, dir).State.Get()
			for _, s := range []string{"network", "servers", "bootstrap"} {
				if st.Step(s).Status != state.StatusDone {
					t.Errorf("step %s = %s", s, st.Step(s).Status)
				}
			}
			if len(events) == 0 {
				t.Error("no events on resume")
			}
		})
	}
}

func TestSecondRunChangesNothing(t *testing.T) {
	dir := t.TempDir()
	w := &world{created: map[string]int{}}
	e := New(steps(w)...)
	if err := e.Run(context.Background(), newEnv(t, dir), Options{}, nil); err != nil {
		t.Fatal(err)
	}
	var kinds []Kind
	if err := e.Run(context.Background(), newEnv(t, dir), Options{}, func(ev Event) { kinds = append(kinds, ev.Kind) }); err != nil {
		t.Fatal(err)
	}
	for _, k := range kinds {
		if k != KindSkipped {
			t.Errorf("second run emitted %s", k)
		}
	}
	plans, err := e.Plan(context.Background(), newEnv(t, dir))
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range plans {
		if p.Count(ActionCreate) != 0 {
			t.Errorf("plan %s still creates", p.Step)
		}
	}
}

type failingStep struct{ testStep }

func (f *failingStep) Apply(ctx context.Context, env *Env, emit Emit) error {
	return fmt.Errorf("token hcloud-SECRET rejected")
}

func TestFailureIsRecordedAndRedacted(t *testing.T) {
	dir := t.TempDir()
	w := &world{created: map[string]int{}}
	e := New(&testStep{"a", []string{"x"}, w}, &failingStep{testStep{name: "b"}}, &testStep{"c", []string{"y"}, w})
	var buf bytes.Buffer
	redact := func(s string) string { return strings.ReplaceAll(s, "hcloud-SECRET", "[redacted]") }
	err := e.Run(context.Background(), newEnv(t, dir), Options{Redact: redact}, jsonSink(&buf))
	if err == nil {
		t.Fatal("no error")
	}
	if strings.Contains(buf.String(), "hcloud-SECRET") {
		t.Error("secret in events")
	}
	if strings.Contains(err.Error(), "hcloud-SECRET") || !strings.Contains(err.Error(), "token [redacted] rejected") {
		t.Errorf("returned error = %q; want it redacted", err)
	}
	raw, rerr := os.ReadFile(filepath.Join(dir, "state.json"))
	if rerr != nil {
		t.Fatal(rerr)
	}
	if strings.Contains(string(raw), "hcloud-SECRET") || !strings.Contains(string(raw), "[redacted]") {
		t.Errorf("state.json holds the secret or no redacted error:\n%s", raw)
	}
	st := newEnv(t, dir).State.Get()
	if st.Step("b").Status != state.StatusFailed || st.Step("c").Status != state.StatusPending {
		t.Errorf("statuses: b=%s c=%s", st.Step("b").Status, st.Step("c").Status)
	}
	status := e.Status(st, spec.Default("demo").Hash())
	if status[0].Status != "done" || status[1].Status != "failed" {
		t.Errorf("status = %+v", status)
	}
	for _, line := range strings.Split(strings.TrimSpace(buf.String()), "\n") {
		var ev Event
		if err := json.Unmarshal([]byte(line), &ev); err != nil {
			t.Errorf("bad JSON line %q", line)
		}
	}
}

func TestOnlyAndFrom(t *testing.T) {
	dir := t.TempDir()
	w := &world{created: map[string]int{}}
	e := New(steps(w)...)
	if err := e.Run(context.Background(), newEnv(t, dir), Options{Only: "servers"}, nil); err != nil {
		t.Fatal(err)
	}
	if w.created["net"] != 0 || w.created["cp-1"] != 1 {
		t.Errorf("--only ran the wrong steps: %v", w.created)
	}
	var started []string
	if err := e.Run(context.Background(), newEnv(t, dir), Options{From: "servers"}, func(ev Event) {
		if ev.Kind == KindStarted {
			started = append(started, string(ev.Step))
		}
	}); err != nil {
		t.Fatal(err)
	}
	if strings.Join(started, ",") != "servers,bootstrap" {
		t.Errorf("--from started %v", started)
	}
	if err := e.Run(context.Background(), newEnv(t, dir), Options{Only: "nope"}, nil); err == nil || !strings.Contains(err.Error(), "the steps are") {
		t.Errorf("unknown step err = %v", err)
	}
}

func TestStaleWhenSpecChanges(t *testing.T) {
	dir := t.TempDir()
	w := &world{created: map[string]int{}}
	e := New(steps(w)...)
	env := newEnv(t, dir)
	if err := e.Run(context.Background(), env, Options{}, nil); err != nil {
		t.Fatal(err)
	}
	s2 := spec.Default("demo")
	s2.Pools[0].Count = 5
	st := env.State.Get()
	for _, s := range e.Status(st, s2.Hash()) {
		if s.Status != "stale" {
			t.Errorf("%s = %s, want stale", s.Name, s.Status)
		}
	}
}

func TestSpecChange(t *testing.T) {
	dir := t.TempDir()
	w := &world{created: map[string]int{}}
	e := New(steps(w)...)
	env := newEnv(t, dir)
	if d := SpecChange(env); d != nil {
		t.Errorf("change before any apply: %v", d)
	}
	if err := e.Run(context.Background(), env, Options{}, nil); err != nil {
		t.Fatal(err)
	}
	if d := SpecChange(env); len(d) != 0 {
		t.Errorf("change right after apply: %v", d)
	}
	env.Spec.Pools[0].Count = 7
	d := SpecChange(env)
	if len(d) != 2 || !strings.Contains(d[1], "count: 7") {
		t.Errorf("diff = %v", d)
	}
}

// depStep waits on a gate so the test can see which steps run together.
type depStep struct {
	name  string
	after []StepName
	gate  chan struct{}
	begun chan string
	fail  bool
}

func (s *depStep) Name() StepName                           { return StepName(s.name) }
func (s *depStep) Title() string                            { return s.name }
func (s *depStep) After() []StepName                        { return s.after }
func (s *depStep) Plan(context.Context, *Env) (Plan, error) { return Plan{}, nil }
func (s *depStep) Apply(ctx context.Context, env *Env, emit Emit) error {
	s.begun <- s.name
	<-s.gate
	if s.fail {
		return errors.New(s.name + " broke")
	}
	return nil
}

// stepWait bounds each wait on a step of the engine tests: a step that
// does not begin or end within it is a deadlock, reported as such rather
// than by the test binary's timeout.
const stepWait = 10 * time.Second

// within receives from ch, failing the test with what it waited for when
// nothing comes within stepWait.
func within[T any](t *testing.T, ch <-chan T, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(stepWait):
		t.Fatalf("waited %s for %s: the engine is stuck", stepWait, what)
		var zero T
		return zero
	}
}

func TestIndependentStepsRunTogether(t *testing.T) {
	begun := make(chan string, 10)
	gate := make(chan struct{})
	mk := func(name string, fail bool, after ...StepName) *depStep {
		return &depStep{name: name, after: after, gate: gate, begun: begun, fail: fail}
	}
	e := New(mk("secrets", false), mk("images", true, "secrets"), mk("network", false, "secrets"),
		mk("pools", false, "network"), mk("servers", false, "images", "pools"))
	env := newEnv(t, t.TempDir())
	errc := make(chan error, 1)
	go func() { errc <- e.Run(context.Background(), env, Options{}, nil) }()
	if got := within(t, begun, "the first step to begin"); got != "secrets" {
		t.Fatalf("first step = %s", got)
	}
	select {
	case gate <- struct{}{}: // secrets finishes
	case <-time.After(stepWait):
		t.Fatalf("secrets did not wait at its gate within %s", stepWait)
	}
	a := within(t, begun, "images or network to begin after secrets")
	b := within(t, begun, "the second of images and network to begin while the first runs")
	if !(a == "images" && b == "network" || a == "network" && b == "images") {
		t.Fatalf("images and network did not start together: %s, %s", a, b)
	}
	close(gate) // images fails, network and pools finish
	err := within(t, errc, "the run to end after images failed")
	if err == nil || !strings.Contains(err.Error(), "images broke") {
		t.Fatalf("err = %v", err)
	}
	st := env.State.Get()
	want := map[string]string{"secrets": "done", "images": "failed", "network": "done", "pools": "done", "servers": "pending"}
	for name, status := range want {
		if got := st.Step(name).Status; got != status {
			t.Errorf("%s = %s, want %s", name, got, status)
		}
	}
}

func TestUnknownDependencyIsRefused(t *testing.T) {
	begun := make(chan string, 10)
	gate := make(chan struct{})
	close(gate)
	cases := map[string]struct {
		steps []Step
		want  string
	}{
		"unknown": {[]Step{&depStep{name: "a", gate: gate, begun: begun}, &depStep{name: "b", after: []StepName{"nope"}, gate: gate, begun: begun}},
			`step b depends on "nope": no step "nope"`},
		"later": {[]Step{&depStep{name: "a", after: []StepName{"b"}, gate: gate, begun: begun}, &depStep{name: "b", gate: gate, begun: begun}},
			"step a depends on b, which runs after it"},
		"duplicate": {[]Step{&depStep{name: "a", gate: gate, begun: begun}, &depStep{name: "a", gate: gate, begun: begun}},
			`two steps are named "a"`},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			e := New(c.steps...)
			err := e.Run(context.Background(), newEnv(t, t.TempDir()), Options{}, nil)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("run: err = %v, want %q", err, c.want)
			}
			if len(begun) != 0 {
				t.Fatalf("a step ran despite the bad dependency")
			}
			if _, err := e.Plan(context.Background(), newEnv(t, t.TempDir())); err == nil {
				t.Fatal("plan accepted the bad dependency")
			}
		})
	}
}

// jsonSink encodes each event as one JSON line, as apply --json does.
func jsonSink(w io.Writer) func(Event) {
	enc := json.NewEncoder(w)
	return func(ev Event) { _ = enc.Encode(ev) }
}
