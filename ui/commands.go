package ui

import (
	"context"
	"errors"
	"fmt"
	"time"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/ohmytalos/ohmytalos/internal/engine"
	"github.com/ohmytalos/ohmytalos/internal/spec"
	"github.com/ohmytalos/ohmytalos/ui/common"
)

// Every function here returns a tea.Cmd: the only places the UI touches the
// outside world (engine, files, backend loaders).

// engineRun is one engine run in flight.
type engineRun struct {
	id     int
	opts   engine.Options
	cancel context.CancelFunc
	// abandon is closed when the UI exits, so the engine goroutine never
	// blocks on a channel nobody reads.
	abandon chan struct{}
}

// stop cancels the run and stops feeding its events.
func (r *engineRun) stop() {
	r.cancel()
	select {
	case <-r.abandon:
	default:
		close(r.abandon)
	}
}

// lookupCmd runs lookup in a command goroutine, bounded to 30 s: the
// catalog, extension and version lookups behind the wizard's pickers.
func lookupCmd(ctx context.Context, lookup func(context.Context) tea.Msg) tea.Cmd {
	return func() tea.Msg {
		ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		defer cancel()
		return lookup(ctx)
	}
}

// catalogCmd loads the price catalog.
func catalogCmd(ctx context.Context, b Backend) tea.Cmd {
	if b.Catalog == nil {
		return nil
	}
	return lookupCmd(ctx, func(ctx context.Context) tea.Msg {
		c, err := b.Catalog(ctx)
		return CatalogMsg{Catalog: c, Err: err}
	})
}

// extensionsCmd lists the official extensions of a Talos version.
func extensionsCmd(ctx context.Context, b Backend, version string) tea.Cmd {
	if b.Extensions == nil {
		return func() tea.Msg {
			return ExtensionsMsg{Version: version, Err: errors.New("no extension source is configured; type extension names into the spec instead")}
		}
	}
	return lookupCmd(ctx, func(ctx context.Context) tea.Msg {
		exts, err := b.Extensions(ctx, version)
		return ExtensionsMsg{Version: version, Extensions: exts, Err: err}
	})
}

// versionsCmd lists the Talos versions the factory can build; nil when no
// version source is configured (the picker is then hidden).
func versionsCmd(ctx context.Context, b Backend) tea.Cmd {
	if b.Versions == nil {
		return nil
	}
	return lookupCmd(ctx, func(ctx context.Context) tea.Msg {
		vs, err := b.Versions(ctx)
		return VersionsMsg{Versions: vs, Err: err}
	})
}

// statusCmd reads the engine's step statuses from the state. The wizard
// shows what is done whatever spec it was done with: the engine itself
// decides on apply whether a step done with an older spec runs again.
func statusCmd(b Backend) tea.Cmd {
	if b.Engine == nil || b.Env == nil || b.Env.State == nil {
		return nil
	}
	return func() tea.Msg {
		return StatusMsg{Steps: b.Engine.Status(b.Env.State.Get(), "")}
	}
}

// planCmd asks every step for its plan against a snapshot of the spec.
func planCmd(ctx context.Context, b Backend, s *spec.Spec) tea.Cmd {
	if b.Engine == nil || b.Env == nil {
		return func() tea.Msg { return PlanMsg{Err: errors.New("no engine is configured")} }
	}
	env := *b.Env
	env.Spec = s
	return func() tea.Msg {
		ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
		defer cancel()
		plans, err := b.Engine.Plan(ctx, &env)
		return PlanMsg{Plans: plans, Err: err}
	}
}

// preflightCmd runs the pre-flight checks against a snapshot of the spec;
// nil when the backend has none.
func preflightCmd(ctx context.Context, b Backend, s *spec.Spec) tea.Cmd {
	if b.Preflight == nil {
		return nil
	}
	hash := s.Hash()
	return func() tea.Msg {
		ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
		defer cancel()
		fs, err := b.Preflight(ctx, s)
		return PreflightMsg{Hash: hash, Findings: fs, Err: err}
	}
}

// saveCmd writes the spec file; hash is the working spec's hash when the
// operator saved (the root records it as saved on success).
func saveCmd(s *spec.Spec, path, hash string) tea.Cmd {
	return func() tea.Msg {
		if path == "" {
			return SavedMsg{Err: errors.New("no spec path is configured; pass --config FILE")}
		}
		if err := s.Save(path); err != nil {
			return SavedMsg{Path: path, Err: fmt.Errorf("write spec file %s: %w; check the folder exists and is writable", path, err)}
		}
		return SavedMsg{Path: path, Hash: hash}
	}
}

// tickCmd ticks once after every (elapsed times are shown in seconds).
func tickCmd(every time.Duration) tea.Cmd {
	return tea.Tick(every, func(t time.Time) tea.Msg { return TickMsg(t) })
}

// startRun starts an engine run against a snapshot of the working spec and
// returns the commands that feed its events back: the engine runs in its
// own goroutine and sends every event into a channel, and common.ReceiveCmd reads
// one message and is re-issued by the root for the next (glow's pattern).
// It returns nil when a run is already in flight. Only the root calls it
// (pages reach it through shared.start): the run state is the root's.
func (m *Model) startRun(opts engine.Options) (*engineRun, tea.Cmd) {
	c := m.c
	if m.running != nil || c.backend.Engine == nil || c.backend.Env == nil {
		return nil, nil
	}
	m.runs++
	snap := cloneSpec(c.spec)
	c.backend.Env.Spec = snap
	env := *c.backend.Env
	if opts.Redact == nil {
		opts.Redact = c.backend.Redact
	}
	ctx, cancel := context.WithCancel(c.ctx)
	run := &engineRun{id: m.runs, opts: opts, cancel: cancel, abandon: make(chan struct{})}
	m.running = run
	ch := make(chan tea.Msg, 64)
	eng := c.backend.Engine
	start := func() tea.Msg {
		go func() {
			defer close(ch)
			defer cancel()
			send := func(m tea.Msg) {
				select {
				case ch <- m:
				case <-run.abandon:
				}
			}
			err := eng.Run(ctx, &env, opts, func(ev engine.Event) {
				send(RunEventMsg{RunID: run.id, Event: ev, ch: ch})
			})
			send(RunDoneMsg{RunID: run.id, Err: err})
		}()
		return nil
	}
	tick := tea.Cmd(nil)
	if !m.ticking {
		m.ticking, tick = true, tickCmd(m.tickEvery)
	}
	return run, tea.Batch(start, common.ReceiveCmd(ch), tick)
}
