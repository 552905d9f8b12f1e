// Package engine runs the provisioning steps in order, headless: it emits
// typed events, checkpoints each step's status in the state store, and
// resumes from the first step that is not done.
package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/ohmytalos/ohmytalos/internal/spec"
	"github.com/ohmytalos/ohmytalos/internal/state"
)

// Env is what every step works with.
type Env struct {
	Spec  *spec.Spec
	State *state.Store
	Log   *slog.Logger
}

// Step is one named, idempotent phase of provisioning.
type Step interface {
	// Name is the short identifier used by --only and --from.
	Name() StepName
	// Title is the human label.
	Title() string
	// Plan says what Apply would create, change or reuse; it mutates nothing.
	Plan(ctx context.Context, env *Env) (Plan, error)
	// Apply does the work, emitting events and checkpointing after every
	// resource. Re-running a finished step changes nothing.
	Apply(ctx context.Context, env *Env, emit Emit) error
}

// Options select which steps run.
type Options struct {
	Only StepName // run just this step
	From StepName // start at this step, even if it is done
	// Force reruns steps already done with the same spec.
	Force bool
	// Redact scrubs secret values from every event and error.
	Redact func(string) string
}

// Engine runs an ordered list of steps.
type Engine struct {
	steps []Step
}

// New returns an engine over steps, in order.
func New(steps ...Step) *Engine { return &Engine{steps: steps} }

// Steps returns the steps in order.
func (e *Engine) Steps() []Step { return e.steps }

// StepStatus is a step's status for display (welcome, resume, sidebar).
type StepStatus struct {
	Name   StepName
	Title  string
	Status Status
	Error  string
}

// Status reports each step's status from the state.
func (e *Engine) Status(st state.State, specHash string) []StepStatus {
	out := make([]StepStatus, 0, len(e.steps))
	for _, s := range e.steps {
		ss := st.Step(string(s.Name()))
		status := Status(ss.Status)
		if status == StatusDone && specHash != "" && ss.SpecHash != specHash {
			status = StatusStale
		}
		out = append(out, StepStatus{Name: s.Name(), Title: s.Title(), Status: status, Error: ss.Error})
	}
	return out
}

// Plan collects every step's plan.
func (e *Engine) Plan(ctx context.Context, env *Env) ([]Plan, error) {
	if err := e.Validate(); err != nil {
		return nil, err
	}
	var out []Plan
	for _, s := range e.steps {
		p, err := s.Plan(ctx, env)
		if err != nil {
			return out, fmt.Errorf("plan %s: %w", s.Name(), err)
		}
		p.Step = s.Name()
		out = append(out, p)
	}
	return out, nil
}

// Validate refuses a step list with two steps of one name, or a
// dependency (engine.Dependent) that names no step or a later one.
func (e *Engine) Validate() error {
	seen := map[StepName]int{}
	for i, s := range e.steps {
		if _, dup := seen[s.Name()]; dup {
			return fmt.Errorf("two steps are named %q: step names must be unique", s.Name())
		}
		seen[s.Name()] = i
	}
	for i, s := range e.steps {
		d, ok := s.(Dependent)
		if !ok {
			continue
		}
		for _, name := range d.After() {
			j, ok := seen[name]
			if !ok {
				_, err := e.index(name)
				return fmt.Errorf("step %s depends on %q: %w", s.Name(), name, err)
			}
			if j >= i {
				return fmt.Errorf("step %s depends on %s, which runs after it: list %s first", s.Name(), name, name)
			}
		}
	}
	return nil
}

func (e *Engine) index(name StepName) (int, error) {
	for i, s := range e.steps {
		if s.Name() == name {
			return i, nil
		}
	}
	names := make([]StepName, len(e.steps))
	for i, s := range e.steps {
		names[i] = s.Name()
	}
	return -1, fmt.Errorf("no step %q: the steps are %v", name, names)
}

// Run applies the steps, skipping those done with the same spec, and
// stops at the first failure. Every event goes to sink.
func (e *Engine) Run(ctx context.Context, env *Env, opts Options, sink func(Event)) error {
	if err := e.Validate(); err != nil {
		return err
	}
	redact := opts.Redact
	if redact == nil {
		redact = func(s string) string { return s }
	}
	var sendMu sync.Mutex
	send := func(ev Event) {
		sendMu.Lock()
		defer sendMu.Unlock()
		if ev.Time.IsZero() {
			ev.Time = time.Now()
		}
		ev.Message = redact(ev.Message)
		ev.Error = redact(ev.Error)
		if env.Log != nil {
			env.Log.Info("event", "step", string(ev.Step), "kind", string(ev.Kind), "resource", ev.Resource,
				"action", string(ev.Action), "message", ev.Message, "error", ev.Error)
		}
		if sink != nil {
			sink(ev)
		}
	}
	start, end := 0, len(e.steps)
	if opts.Only != "" {
		i, err := e.index(opts.Only)
		if err != nil {
			return err
		}
		start, end = i, i+1
	} else if opts.From != "" {
		i, err := e.index(opts.From)
		if err != nil {
			return err
		}
		start = i
	}
	hash := env.Spec.Hash()
	var run []int
	for i := start; i < end; i++ {
		s := e.steps[i]
		ss := env.State.Get().Step(string(s.Name()))
		forced := opts.Force || (opts.From != "" && i == start) || opts.Only != ""
		if ss.Status == state.StatusDone && ss.SpecHash == hash && !forced {
			if why := drifted(ctx, env, s); why != "" {
				send(Event{Step: s.Name(), Kind: KindWarning, Message: s.Title() + ": runs again: " + why})
				run = append(run, i)
				continue
			}
			send(Event{Step: s.Name(), Kind: KindSkipped, Message: s.Title() + ": done in an earlier run"})
			continue
		}
		run = append(run, i)
	}
	return e.schedule(ctx, env, run, hash, send, redact)
}

// Drifter is implemented by a step whose desired state depends on more
// than the spec (the firewall admits the operator's detected address): a
// step done with the same spec runs again when Drift names a reason.
type Drifter interface {
	Drift(ctx context.Context, env *Env) string
}

// drifted is the reason s must run again although done with this spec, or
// "" when it need not (or s cannot tell).
func drifted(ctx context.Context, env *Env, s Step) string {
	if d, ok := s.(Drifter); ok {
		return d.Drift(ctx, env)
	}
	return ""
}

// Dependent is implemented by a step that names the steps it needs; it
// may then run alongside others. A step without it waits for the step
// before it, so plain step lists run in order.
type Dependent interface {
	After() []StepName
}

// errDependency marks a step not run because a step it needs failed.
var errDependency = errors.New("a step it needs did not finish")

// schedule runs the steps at the given indexes, each as soon as the steps
// it needs (among those being run) have finished. A failure stops only
// the steps that need the failed one; the first error in step order is
// returned once every started step has checkpointed.
func (e *Engine) schedule(ctx context.Context, env *Env, run []int, hash string, send func(Event), redact func(string) string) error {
	pos := map[int]int{}
	for k, i := range run {
		pos[i] = k
	}
	done := make([]chan struct{}, len(run))
	errs := make([]error, len(run))
	for k := range run {
		done[k] = make(chan struct{})
	}
	var wg sync.WaitGroup
	for k, i := range run {
		deps := e.deps(i, run, pos)
		wg.Add(1)
		go func(k int, s Step, deps []int) {
			defer wg.Done()
			defer close(done[k])
			for _, d := range deps {
				<-done[d]
				if errs[d] != nil {
					errs[k] = errDependency
					return
				}
			}
			if err := ctx.Err(); err != nil {
				errs[k] = interrupted(err)
				return
			}
			errs[k] = e.runStep(ctx, env, s, hash, send, redact)
		}(k, e.steps[i], deps)
	}
	wg.Wait()
	var dep error
	for _, err := range errs {
		switch {
		case err == nil:
		case errors.Is(err, errDependency):
			dep = err
		default:
			return err
		}
	}
	return dep
}

// deps returns, as positions in run, the steps step i waits for.
func (e *Engine) deps(i int, run []int, pos map[int]int) []int {
	d, ok := e.steps[i].(Dependent)
	if !ok {
		for k := len(run) - 1; k >= 0; k-- {
			if run[k] < i {
				return []int{k}
			}
		}
		return nil
	}
	var out []int
	for _, name := range d.After() {
		j, err := e.index(name)
		if err != nil {
			continue // Validate refused it before any step ran
		}
		if k, ok := pos[j]; ok && j < i {
			out = append(out, k)
		}
	}
	return out
}

func (e *Engine) runStep(ctx context.Context, env *Env, s Step, hash string, send func(Event), redact func(string) string) error {
	name := s.Name()
	key := string(name)
	started := time.Now().UTC()
	if err := env.State.Update(func(st *state.State) error {
		st.Steps[key] = &state.StepState{Status: state.StatusRunning, SpecHash: hash, Started: started}
		return nil
	}); err != nil {
		return fmt.Errorf("checkpoint %s: %w", name, err)
	}
	send(Event{Step: name, Kind: KindStarted, Message: s.Title()})
	emit := func(ev Event) {
		ev.Step = name
		send(ev)
	}
	err := s.Apply(ctx, env, emit)
	if err == nil && ctx.Err() != nil {
		err = ctx.Err()
	}
	if err != nil {
		err = redacted(err, redact) // state.json and the caller get no secret
		status, msg := state.StatusFailed, err.Error()
		if errors.Is(err, context.Canceled) {
			status, msg = state.StatusPending, "interrupted: run apply again to resume"
		}
		_ = env.State.Update(func(st *state.State) error {
			st.Steps[key] = &state.StepState{Status: status, SpecHash: hash, Started: started, Error: msg}
			return nil
		})
		send(Event{Step: name, Kind: KindFailed, Error: msg, Message: s.Title() + " failed"})
		if errors.Is(err, context.Canceled) {
			return interrupted(err)
		}
		return fmt.Errorf("%s: %w", name, err)
	}
	if err := env.State.Update(func(st *state.State) error {
		st.Steps[key] = &state.StepState{Status: state.StatusDone, SpecHash: hash, Started: started, Finished: time.Now().UTC()}
		st.SpecHash = hash
		if y, err := env.Spec.Marshal(); err == nil {
			b, _ := json.Marshal(string(y))
			st.Data[DataAppliedSpec] = b
		}
		return nil
	}); err != nil {
		return fmt.Errorf("checkpoint %s: %w", name, err)
	}
	send(Event{Step: name, Kind: KindDone, Message: s.Title() + " done", Elapsed: time.Since(started)})
	return nil
}

// DataAppliedSpec is the state data key of the spec the last finished
// step ran with (YAML; specs hold no secret values).
const DataAppliedSpec = "appliedSpec"

// SpecChange returns the line diff between the spec last applied and env's
// spec; nil when nothing was applied yet or nothing changed.
func SpecChange(env *Env) []string {
	var prev string
	if found, err := env.State.GetData(DataAppliedSpec, &prev); !found || err != nil {
		return nil
	}
	cur, err := env.Spec.Marshal()
	if err != nil {
		return nil
	}
	return spec.Diff([]byte(prev), cur)
}

// redactedError is an error whose text is scrubbed of secrets; errors.Is
// and errors.As still see the original.
type redactedError struct {
	err error
	msg string
}

func (r redactedError) Error() string { return r.msg }
func (r redactedError) Unwrap() error { return r.err }

func redacted(err error, redact func(string) string) error {
	if msg := redact(err.Error()); msg != err.Error() {
		return redactedError{err: err, msg: msg}
	}
	return err
}

// ErrInterrupted is returned when the run was cancelled (Ctrl-C).
var ErrInterrupted = errors.New("interrupted: the state is saved; run the same command again to resume")

func interrupted(err error) error { return fmt.Errorf("%w (%v)", ErrInterrupted, err) }
