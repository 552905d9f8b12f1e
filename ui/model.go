package ui

import (
	"context"
	"time"

	"github.com/charmbracelet/bubbles/help"
	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"

	"github.com/ohmytalos/ohmytalos/internal/engine"
	"github.com/ohmytalos/ohmytalos/internal/spec"
	"github.com/ohmytalos/ohmytalos/ui/common"
	"github.com/ohmytalos/ohmytalos/ui/components"
)

// screenID names a wizard screen; the order is the sidebar's.
type screenID int

// The wizard's screens, in order.
const (
	scrWelcome screenID = iota
	scrSecrets
	scrImages
	scrNetwork
	scrPools
	scrReview
	scrBootstrap
	scrDone
	numScreens
)

// String is the sidebar label.
func (s screenID) String() string {
	switch s {
	case scrWelcome:
		return "welcome"
	case scrSecrets:
		return "secrets"
	case scrImages:
		return "images"
	case scrNetwork:
		return "network"
	case scrPools:
		return "pools"
	case scrReview:
		return "review"
	case scrBootstrap:
		return "bootstrap"
	case scrDone:
		return "done"
	}
	return "?"
}

// screen is one page of the wizard. Screens read the root's shared state.
type screen interface {
	// enter runs when the screen becomes active; it may start loads.
	enter() tea.Cmd
	// update handles keys (when active) and the messages meant for it.
	update(msg tea.Msg) tea.Cmd
	// view renders the content area (Common.Width x Common.Height).
	view() string
	// setCommon hands the page a new copy of the common value (after a
	// resize); pages embed page for it.
	setCommon(c common.Common)
	// help lists the keys that work right now.
	help() keyHelp
	// capturing is set while a text input has focus: printable keys
	// belong to it, not to the wizard-wide bindings.
	capturing() bool
}

// Model is the wizard's root model: it owns the shell (sidebar, status
// bar, footer) and the working spec, routes keys to the active screen and
// every other message to the screen it is for (route.go), and re-issues
// the commands that stream engine events.
type Model struct {
	// overlay is a full-screen sub-program (the doctor) that gets every
	// message until it sends doctorui.ClosedMsg.
	overlay components.Overlay
	// spec is the working spec: only the root writes it, in response to
	// SpecEditMsg (specedit.go); pages read the copy in c.spec.
	spec *spec.Spec
	c    *shared
	// com is the root's common value (content size, styles, keys); each
	// page gets its own copy of it (setCommon) on every resize.
	com      common.Common
	screens  [numScreens]screen
	active   screenID
	help     help.Model
	fullHelp bool
	width    int
	height   int
	// stopping is set after ctrl+c during a run: the wizard quits once the
	// engine has checkpointed and returned.
	stopping bool
	// visited marks the editing screens the operator confirmed.
	visited map[screenID]bool
	// rateRemaining is the last "API requests remaining" an event reported;
	// -1 when none did.
	rateRemaining int

	// runs counts engine runs, to tell their messages apart; running is
	// set while one is in flight (the engine runs one at a time).
	runs    int
	running *engineRun
	runErr  error
	// ticking is set while a tick is pending, so runs never start a second
	// tick chain.
	ticking bool
	// tickEvery is the elapsed-time refresh interval.
	tickEvery time.Duration
	// notice is a one-key message in the status bar (why a step cannot be
	// opened yet, that the wizard is stopping).
	notice string
	// build is the last status of Backend.Build (buildMsg), read every
	// buildEvery (default buildPoll).
	build      BuildStatus
	buildEvery time.Duration
}

func newModel(ctx context.Context, b Backend, o Options) *Model {
	return newModelOn(ctx, b, o, nil)
}

// newModelOn is newModel on renderer r (a new one on stdout when nil).
func newModelOn(ctx context.Context, b Backend, o Options, r *lipgloss.Renderer) *Model {
	if o.Width <= 0 {
		o.Width = 80
	}
	if o.Height <= 0 {
		o.Height = 24
	}
	c := &shared{ctx: ctx, backend: b, opts: o, status: map[engine.StepName]engine.StepStatus{}}
	m := &Model{c: c, com: common.Common{Styles: NewStyles(r, o.NoColor), Keys: DefaultKeyMap()},
		help: help.New(), visited: map[screenID]bool{}, rateRemaining: -1, tickEvery: time.Second}
	if b.Env != nil && b.Env.Spec != nil {
		m.spec = cloneSpec(b.Env.Spec)
	} else {
		m.spec = spec.Default("cluster")
	}
	c.spec = cloneSpec(m.spec)
	c.send = func(msg SpecEditMsg) { m.Update(msg) }
	c.start = func(opts engine.Options) (int, tea.Cmd) {
		run, cmd := m.startRun(opts)
		if run == nil {
			return 0, nil
		}
		return run.id, cmd
	}
	if b.Engine != nil && b.Env != nil && b.Env.State != nil {
		for _, st := range b.Engine.Status(b.Env.State.Get(), "") {
			c.status[st.Name] = st
		}
	}
	if o.Resume {
		// A resumed spec was read from Backend.SpecPath: the file holds it.
		c.savedHash = m.spec.Hash()
	}
	c.specChanged()
	m.help.Styles = m.com.Styles.Help
	m.screens = [numScreens]screen{
		newWelcome(c, m.com), newSecrets(c, m.com), newImages(c, m.com), newNetwork(c, m.com),
		newPools(c, m.com), newReview(c, m.com), newBootstrap(c, m.com), newDone(c, m.com),
	}
	m.resize(o.Width, o.Height)
	if o.Resume || m.anyDone() {
		m.active = m.firstUnfinished()
		for s := scrWelcome; s < m.active; s++ {
			m.visited[s] = true
		}
	}
	return m
}

// Init implements tea.Model: it loads the price catalog.
func (m *Model) Init() tea.Cmd {
	return tea.Batch(catalogCmd(m.c.ctx, m.c.backend), m.screens[m.active].enter(), buildCmd(m.c.backend, 0))
}

// Update implements tea.Model.
func (m *Model) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	if e, ok := msg.(SpecEditMsg); ok {
		// Before the overlay: an edit is the root's business, never the
		// doctor's.
		m.applyEdit(e)
		return m, nil
	}
	if m.overlay.Active() || isOpenDoctor(msg) {
		return m, m.updateOverlay(msg)
	}
	c := m.c
	var cmds []tea.Cmd
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		m.resize(msg.Width, msg.Height)
		return m, nil
	case tea.KeyMsg:
		return m, m.handleKey(msg)
	case buildMsg:
		return m, m.onBuild(msg)
	case navMsg:
		return m, m.goTo(msg.to)
	case resumeMsg:
		m.visited[scrWelcome] = true
		return m, m.goTo(m.firstUnfinished())
	case SavedMsg:
		if msg.Err == nil {
			c.savedHash = msg.Hash
		}
	case CatalogMsg:
		c.catalog, c.catalogErr = msg.Catalog, msg.Err
		c.specChanged()
	case StatusMsg:
		for _, st := range msg.Steps {
			c.status[st.Name] = st
		}
	case TickMsg:
		c.now = time.Time(msg)
		m.ticking = m.running != nil
		if m.ticking {
			cmds = append(cmds, tickCmd(m.tickEvery))
		}
	case RunEventMsg:
		m.observe(msg.Event)
		if msg.ch != nil {
			cmds = append(cmds, common.ReceiveCmd(msg.ch))
		}
	case RunDoneMsg:
		if m.running != nil && m.running.id == msg.RunID {
			m.running = nil
		}
		m.runErr = msg.Err
		cmds = append(cmds, statusCmd(c.backend))
		if m.stopping {
			cmds = append(cmds, tea.Quit)
		}
	}
	for _, id := range m.recipients(msg) {
		cmds = append(cmds, m.screens[id].update(msg))
	}
	return m, tea.Batch(cmds...)
}

// handleKey applies the wizard-wide keys, else hands the key to the
// active screen.
func (m *Model) handleKey(msg tea.KeyMsg) tea.Cmd {
	c, km := m.c, m.com.Keys
	scr := m.screens[m.active]
	m.notice = ""
	switch {
	case key.Matches(msg, km.Quit):
		if m.running != nil && !m.stopping {
			m.stopping = true
			m.notice = "stopping: waiting for the engine to save its state (ctrl+c again to quit now)"
			m.running.cancel()
			return nil
		}
		m.stopRuns()
		return tea.Quit
	case key.Matches(msg, km.FullError):
		c.fullErrors = !c.fullErrors
		return nil
	case key.Matches(msg, km.Help) && !scr.capturing():
		m.fullHelp = !m.fullHelp
		m.resize(m.width, m.height)
		return nil
	case key.Matches(msg, km.Next):
		return m.goTo(m.active + 1)
	case key.Matches(msg, km.Prev):
		return m.goTo(m.active - 1)
	}
	return scr.update(msg)
}

// stopRuns cancels the engine run in flight, if any.
func (m *Model) stopRuns() {
	if m.running != nil {
		m.running.stop()
	}
}

// observe notes what the shell shows from events: step statuses and the
// API requests remaining.
func (m *Model) observe(ev engine.Event) {
	c := m.c
	if !ev.Time.IsZero() {
		c.now = ev.Time
	}
	if ev.RateLimit != nil {
		m.rateRemaining = ev.RateLimit.Remaining
	}
	st := c.status[ev.Step]
	st.Name = ev.Step
	switch ev.Kind {
	case engine.KindStarted:
		st.Status, st.Error = engine.StatusRunning, ""
	case engine.KindDone, engine.KindSkipped:
		st.Status, st.Error = engine.StatusDone, ""
	case engine.KindFailed:
		st.Status, st.Error = engine.StatusFailed, ev.Error
	default:
		return
	}
	c.status[ev.Step] = st
}

// resize lays the shell out for a terminal of w x h.
func (m *Model) resize(w, h int) {
	m.width, m.height = w, h
	m.help.Width = w
	m.com.Width = max(w-m.sidebarWidth()-3, 20)
	m.share() // the footer's height reads the active page's keys
	m.com.Height = max(h-1-m.footerHeight(), 5)
	m.share()
}

// share hands every page a copy of the root's common value.
func (m *Model) share() {
	for _, s := range m.screens {
		s.setCommon(m.com)
	}
}

func (m *Model) sidebarWidth() int {
	if m.width >= 120 {
		return 18
	}
	return 15
}

func (m *Model) footerHeight() int {
	return lipgloss.Height(m.footer())
}
