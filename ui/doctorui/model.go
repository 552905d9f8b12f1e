package doctorui

import (
	"context"
	"os"

	"github.com/charmbracelet/bubbles/help"
	"github.com/charmbracelet/bubbles/key"
	"github.com/charmbracelet/bubbles/spinner"
	"github.com/charmbracelet/bubbles/viewport"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"

	"github.com/ohmytalos/ohmytalos/internal/doctor"
	"github.com/ohmytalos/ohmytalos/ui/common"
)

// row is one check in the list with its latest known outcome.
type row struct {
	id, title string
	status    doctor.Status
	result    doctor.Result
	done      bool
}

// Model is the doctor screen's bubbletea model.
type Model struct {
	ctx    context.Context
	run    RunFunc
	opts   Options
	styles Styles
	keys   KeyMap

	rows     []row
	selected int
	detail   bool

	// runID numbers runs; running is set while one is in flight and
	// cancel stops it.
	runID   int
	running bool
	cancel  context.CancelFunc

	width, height int
	spinner       spinner.Model
	viewport      viewport.Model
	help          help.Model
}

func newModel(ctx context.Context, run RunFunc, checks []doctor.Check, o Options, r *lipgloss.Renderer) *Model {
	if r == nil {
		r = lipgloss.NewRenderer(os.Stdout)
	}
	if ctx == nil {
		ctx = context.Background()
	}
	m := &Model{ctx: ctx, run: run, opts: o, styles: NewStyles(r, o.NoColor), keys: DefaultKeyMap(),
		width: o.Width, height: o.Height}
	if m.width <= 0 {
		m.width = 80
	}
	if m.height <= 0 {
		m.height = 24
	}
	only := map[string]bool{}
	for _, id := range o.Only {
		only[id] = true
	}
	for _, c := range checks {
		if len(only) == 0 || only[c.ID] {
			m.rows = append(m.rows, row{id: c.ID, title: c.Title, status: doctor.StatusPending})
		}
	}
	m.spinner = spinner.New(spinner.WithSpinner(spinner.MiniDot), spinner.WithStyle(m.styles.Spinner))
	m.viewport = viewport.New(m.width, m.bodyHeight())
	m.help = help.New()
	m.help.Styles = m.styles.Help
	return m
}

// Results returns the latest result of every check that finished, in list
// order: what the caller needs for the doctor's exit code.
func (m *Model) Results() []doctor.Result {
	var out []doctor.Result
	for _, r := range m.rows {
		if r.done {
			out = append(out, r.result)
		}
	}
	return out
}

// Init starts running every check.
func (m *Model) Init() tea.Cmd { return m.startRun(nil) }

// startRun marks the rows of ids (all rows when empty) running and returns
// the commands that run them and animate the spinner. With Options.Only,
// "all rows" is the checks it names.
func (m *Model) startRun(ids []string) tea.Cmd {
	if m.run == nil {
		return nil
	}
	if len(ids) == 0 && len(m.opts.Only) > 0 {
		ids = append([]string(nil), m.opts.Only...)
	}
	m.stop()
	m.runID++
	want := map[string]bool{}
	for _, id := range ids {
		want[id] = true
	}
	for i := range m.rows {
		if len(ids) == 0 || want[m.rows[i].id] {
			m.rows[i].status, m.rows[i].done = doctor.StatusRunning, false
		}
	}
	ctx, cancel := context.WithCancel(m.ctx)
	m.cancel, m.running = cancel, true
	m.refreshDetail()
	return tea.Batch(startRunCmd(ctx, m.run, m.runID, ids), m.spinner.Tick)
}

// stop cancels the run in flight, if any.
func (m *Model) stop() {
	if m.cancel != nil {
		m.cancel()
		m.cancel = nil
	}
	m.running = false
}

// Update handles keys, window sizes, results and spinner ticks.
func (m *Model) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		m.width, m.height = msg.Width, msg.Height
		m.viewport.Width, m.viewport.Height = m.width, m.bodyHeight()
		m.refreshDetail()
		return m, nil
	case tea.KeyMsg:
		return m, m.handleKey(msg)
	case runStartedMsg:
		if msg.runID != m.runID {
			return m, nil
		}
		return m, common.ReceiveCmd(msg.ch)
	case ResultMsg:
		if msg.RunID != m.runID {
			return m, nil
		}
		m.record(msg.Result)
		return m, common.ReceiveCmd(msg.ch)
	case RunDoneMsg:
		if msg.RunID != m.runID {
			return m, nil
		}
		for _, r := range msg.Results {
			m.record(r)
		}
		m.stop()
		return m, nil
	case spinner.TickMsg:
		if !m.running {
			return m, nil // stop animating: no tick is re-issued
		}
		var cmd tea.Cmd
		m.spinner, cmd = m.spinner.Update(msg)
		return m, cmd
	}
	return m, nil
}

// handleKey maps a key to its action on the list or the details.
func (m *Model) handleKey(msg tea.KeyMsg) tea.Cmd {
	if key.Matches(msg, m.keys.Quit) {
		m.stop()
		if m.opts.Embedded {
			return func() tea.Msg { return ClosedMsg{} }
		}
		return tea.Quit
	}
	if m.detail {
		switch {
		case key.Matches(msg, m.keys.Back):
			m.detail = false
		case key.Matches(msg, m.keys.RerunOne):
			if !m.running && len(m.rows) > 0 {
				return m.startRun([]string{m.rows[m.selected].id})
			}
		default:
			var cmd tea.Cmd
			m.viewport, cmd = m.viewport.Update(msg)
			return cmd
		}
		return nil
	}
	switch {
	case key.Matches(msg, m.keys.Up):
		if m.selected > 0 {
			m.selected--
		}
	case key.Matches(msg, m.keys.Down):
		if m.selected < len(m.rows)-1 {
			m.selected++
		}
	case key.Matches(msg, m.keys.Open):
		if len(m.rows) > 0 {
			m.detail = true
			m.refreshDetail()
			m.viewport.GotoTop()
		}
	case key.Matches(msg, m.keys.RerunAll):
		if !m.running {
			return m.startRun(nil)
		}
	}
	return nil
}

// record stores a result in its row, adding a row for an ID the list did
// not know (doctor.Run reports unknown IDs as errors).
func (m *Model) record(r doctor.Result) {
	for i := range m.rows {
		if m.rows[i].id == r.ID {
			m.rows[i].result, m.rows[i].status, m.rows[i].done = r, r.Status, true
			if m.rows[i].title == "" {
				m.rows[i].title = r.Title
			}
			m.refreshDetail()
			return
		}
	}
	m.rows = append(m.rows, row{id: r.ID, title: r.Title, status: r.Status, result: r, done: true})
	m.refreshDetail()
}

// refreshDetail re-renders the details of the selected check into the
// viewport, keeping the scroll position when the content changes.
func (m *Model) refreshDetail() {
	if !m.detail || len(m.rows) == 0 {
		return
	}
	m.viewport.SetContent(m.detailContent(m.rows[m.selected]))
}
