package ui

import (
	"fmt"
	"github.com/ohmytalos/ohmytalos/internal/reporter"
	"strings"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"

	"github.com/ohmytalos/ohmytalos/internal/engine"
	"github.com/ohmytalos/ohmytalos/ui/common"
)

// welcomeScreen greets the operator and, when the state holds progress,
// says what is done and what is left.
type welcomeScreen struct {
	// page is the screen's own copy of the size, styles and keys.
	page
	c *shared
}

func newWelcome(c *shared, com common.Common) *welcomeScreen {
	return &welcomeScreen{c: c, page: page{com}}
}

func (s *welcomeScreen) enter() tea.Cmd  { return statusCmd(s.c.backend) }
func (s *welcomeScreen) capturing() bool { return false }
func (s *welcomeScreen) help() keyHelp   { return keyHelp{short: []key.Binding{s.enterKey()}} }
func (s *welcomeScreen) resuming() bool  { return s.c.opts.Resume || s.anyProgress() }
func (s *welcomeScreen) enterKey() key.Binding {
	k := s.Keys.Enter
	if s.resuming() {
		k.SetHelp("enter", "resume")
	} else {
		k.SetHelp("enter", "start")
	}
	return k
}

func (s *welcomeScreen) anyProgress() bool {
	for _, st := range s.c.status {
		if st.Status != "" && st.Status != engine.StatusPending {
			return true
		}
	}
	return false
}

func (s *welcomeScreen) update(msg tea.Msg) tea.Cmd {
	k, ok := msg.(tea.KeyMsg)
	if !ok || !key.Matches(k, s.Keys.Enter) {
		return nil
	}
	return func() tea.Msg { return resumeMsg{} }
}

// resumeMsg asks the root to open the first unfinished screen.
type resumeMsg struct{}

func (s *welcomeScreen) view() string {
	c, st := s.c, s.Styles
	var b strings.Builder
	b.WriteString(header(s.Common, "Talos Kubernetes on Hetzner Cloud", "the ohmytalos wizard") + "\n")
	if c.backend.Sandbox {
		b.WriteString(st.Warn.Render(common.Wrap("Sandbox mode: everything runs against built-in fakes. Nothing is created on Hetzner and nothing is billed.", s.Width)) + "\n\n")
	}
	b.WriteString(common.Wrap(fmt.Sprintf("Cluster %s: %d control planes, %d pool(s), Talos %s, Kubernetes %s, in %s.",
		c.spec.Name, c.spec.ControlPlane.Count, len(c.spec.Pools), c.spec.Talos.Version, c.spec.Kubernetes.Version, c.spec.Location), s.Width) + "\n\n")
	if !s.resuming() {
		b.WriteString(common.Wrap("This wizard walks through the token, the Talos images, the network, the node pools and a "+
			"review of plan and cost, then creates and bootstraps the cluster. Every step can be "+
			"interrupted and resumed; nothing is created before you confirm it.", s.Width) + "\n\n")
		b.WriteString(st.Accent.Render("enter") + " to start a new cluster.")
		return b.String()
	}
	b.WriteString(st.Bold.Render("Resume: what is done and what is left") + "\n")
	if c.backend.Engine != nil {
		for _, step := range c.backend.Engine.Steps() {
			ss := c.status[step.Name()]
			status := ss.Status
			if status == "" {
				status = engine.StatusPending
			}
			line := fmt.Sprintf("%s %-10s %s", toneStyle(st, reporter.StatusTone(status)).Render(reporter.StatusGlyph(status)), step.Name(), st.Subtle.Render(step.Title()+": "+string(status)))
			if ss.Error != "" {
				line += "\n" + common.Indent(errorText(s.Common, s.c.fullErrors, st.Bad, ss.Error, s.Width-4), 4)
			}
			b.WriteString(line + "\n")
		}
	}
	b.WriteString("\n" + st.Accent.Render("enter") + " to continue where the last run stopped.")
	return b.String()
}
