package ui

import (
	"fmt"
	"github.com/ohmytalos/ohmytalos/steps"
	"strings"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/ansi"

	"github.com/ohmytalos/ohmytalos/internal/engine"
	"github.com/ohmytalos/ohmytalos/ui/common"
)

// Sidebar statuses.
const (
	statusDone      = "done"
	statusCurrent   = "current"
	statusPending   = "pending"
	statusFailed    = "failed"
	statusResumable = "resumable"
)

// deploySteps are the engine steps the bootstrap screen runs.
func deploySteps() []engine.StepName {
	return []engine.StepName{steps.StepNetwork, steps.StepPools, steps.StepConfigs, steps.StepServers, steps.StepBootstrap, steps.StepAddons}
}

// View implements tea.Model.
func (m *Model) View() string {
	if m.overlay.Active() {
		return m.overlay.View()
	}
	if m.width < 60 || m.height < 16 {
		return fmt.Sprintf("ohmytalos needs a terminal of at least 80x24 (this one is %dx%d): enlarge the window.", m.width, m.height)
	}
	body := lipgloss.JoinHorizontal(lipgloss.Top,
		m.sidebar(),
		" ",
		fit(m.screens[m.active].view(), m.com.Width, m.com.Height),
	)
	return lipgloss.JoinVertical(lipgloss.Left, m.statusBar(), body, m.footer())
}

// sidebar lists the steps with their status.
func (m *Model) sidebar() string {
	st := m.com.Styles
	w := m.sidebarWidth()
	lines := make([]string, 0, numScreens)
	for id := scrWelcome; id < numScreens; id++ {
		status := m.sidebarStatus(id)
		glyph, style := "·", st.Subtle
		switch status {
		case statusDone:
			glyph, style = "✓", st.Good
		case statusCurrent:
			glyph, style = "▶", st.Selected
		case statusFailed:
			glyph, style = "✗", st.Bad
		case statusResumable:
			glyph, style = "↻", st.Warn
		}
		label := id.String()
		if id == m.active {
			label = st.Selected.Render(label)
		}
		lines = append(lines, style.Render(glyph)+" "+label)
	}
	lines = append(lines, "")
	if m.c.backend.Sandbox {
		lines = append(lines, st.Sandbox.Render(" SANDBOX "), st.Subtle.Render("fakes only"))
	}
	return st.Sidebar.Width(w).Height(m.com.Height).MaxHeight(m.com.Height).Render(strings.Join(lines, "\n"))
}

// sidebarStatus maps a screen to done, current, pending, failed or
// resumable, from the engine's statuses and what the operator confirmed.
func (m *Model) sidebarStatus(id screenID) string {
	c := m.c
	if id == m.active {
		return statusCurrent
	}
	engineStatus := func(name engine.StepName) string {
		switch c.stepStatus(name) {
		case engine.StatusDone:
			return statusDone
		case engine.StatusFailed:
			return statusFailed
		case engine.StatusRunning, engine.StatusStale:
			return statusResumable
		}
		return statusPending
	}
	switch id {
	case scrSecrets:
		return engineStatus(steps.StepSecrets)
	case scrImages:
		return engineStatus(steps.StepImages)
	case scrNetwork, scrPools, scrReview:
		if m.visited[id] || (id == scrReview && c.isSaved()) || m.deployStarted() {
			return statusDone
		}
	case scrBootstrap:
		return m.deployStatus()
	case scrDone:
		if m.deployStatus() == statusDone {
			return statusDone
		}
	case scrWelcome:
		if m.visited[id] {
			return statusDone
		}
	}
	return statusPending
}

// deployStarted reports whether any deploy step ran.
func (m *Model) deployStarted() bool {
	for _, s := range deploySteps() {
		if m.c.stepStatus(s) != engine.StatusPending {
			return true
		}
	}
	return false
}

// addonsFailedOnly reports whether every deploy step is done but the
// add-ons step, which failed.
func (m *Model) addonsFailedOnly() bool {
	for _, s := range deploySteps() {
		want := engine.StatusDone
		if s == steps.StepAddons {
			want = engine.StatusFailed
		}
		if m.c.stepStatus(s) != want {
			return false
		}
	}
	return true
}

// deployStatus summarises the deploy steps for the bootstrap entry.
func (m *Model) deployStatus() string { return m.c.deployStatus() }

// anyDone reports whether the state holds a finished step.
func (m *Model) anyDone() bool {
	for _, st := range m.c.status {
		if st.Status == engine.StatusDone {
			return true
		}
	}
	return false
}

// firstUnfinished is where a resumed wizard opens.
func (m *Model) firstUnfinished() screenID {
	c := m.c
	switch {
	case c.stepStatus(steps.StepSecrets) != engine.StatusDone:
		return scrSecrets
	case c.stepStatus(steps.StepImages) != engine.StatusDone:
		return scrImages
	case m.deployStatus() == statusDone:
		return scrDone
	case m.deployStarted():
		return scrBootstrap
	}
	return scrNetwork
}

// canEnter says whether the operator may open a screen now, and if not why.
func (m *Model) canEnter(id screenID) (bool, string) {
	switch id {
	case scrBootstrap:
		if !m.c.isSaved() && !m.deployStarted() {
			return false, "save the spec on the review screen first"
		}
	case scrDone:
		// A cluster whose add-ons failed exists: the done screen says
		// what it lacks.
		if m.deployStatus() != statusDone && !m.addonsFailedOnly() {
			return false, "the cluster is not bootstrapped yet"
		}
	}
	return id >= scrWelcome && id < numScreens, ""
}

// goTo shows screen id if it may be opened.
func (m *Model) goTo(id screenID) tea.Cmd {
	if id < scrWelcome || id >= numScreens || id == m.active {
		return nil
	}
	if ok, why := m.canEnter(id); !ok {
		m.notice = id.String() + ": " + why
		return nil
	}
	if id > m.active {
		m.visited[m.active] = true
	}
	m.active = id
	if len(m.buildLines()) > 0 {
		m.resize(m.width, m.height) // the build panel is shorter past the first screen
	}
	// The last apply may have changed the cost to compare against.
	m.c.specChanged()
	return m.screens[id].enter()
}

// statusBar shows the cluster, the sandbox badge, the monthly cost and the
// API requests remaining.
func (m *Model) statusBar() string {
	c, st := m.c, m.com.Styles
	left := st.Title.Render("ohmytalos") + " " + st.Subtle.Render("cluster") + " " + st.Bold.Render(c.spec.Name)
	if c.backend.Sandbox {
		left += " " + st.Sandbox.Render(" SANDBOX ")
	}
	if m.notice != "" {
		left += "  " + st.Warn.Render(m.notice)
	}
	var right []string
	switch {
	case c.estimate != nil:
		cost := fmt.Sprintf("%s %s/month net", c.estimate.MonthlyNet.Format(2), c.estimate.Currency)
		if c.backend.Sandbox {
			cost = fmt.Sprintf("if real: %s %s/mo", c.estimate.MonthlyNet.Format(2), c.estimate.Currency)
		}
		right = append(right, cost)
	case c.estimateErr != nil:
		right = append(right, st.Warn.Render("cost: fix the pools"))
	case c.catalogErr != nil:
		right = append(right, st.Warn.Render("prices unavailable"))
	default:
		right = append(right, st.Subtle.Render("loading prices"))
	}
	if m.rateRemaining >= 0 {
		api := fmt.Sprintf("API %d left", m.rateRemaining)
		if c.backend.Sandbox {
			api += " (fake)"
		}
		right = append(right, api)
	}
	r := strings.Join(right, st.Subtle.Render(" · "))
	gap := m.width - lipgloss.Width(left) - lipgloss.Width(r)
	if gap < 1 {
		return ansi.Truncate(left+" "+r, m.width, "…")
	}
	return left + strings.Repeat(" ", gap) + r
}

// footer is the help of the active screen plus the wizard-wide keys.
func (m *Model) footer() string {
	if m.screens[m.active] == nil {
		return ""
	}
	k := m.screens[m.active].help().withGlobal(m.com.Keys)
	global := m.help.ShortHelpView(k.global)
	hm := m.help
	hm.Width = max(m.width-lipgloss.Width(global)-3, 10)
	out := hm.ShortHelpView(k.short)
	if out != "" && global != "" {
		out += m.com.Styles.Subtle.Render(m.help.ShortSeparator) + global
	}
	if m.fullHelp {
		out = m.help.FullHelpView(k.FullHelp())
		if m.c.backend.LogPath != "" {
			out += "\n" + m.com.Styles.Subtle.Render("log: "+m.c.backend.LogPath)
		}
	}
	// help.ShortHelpView can overflow its Width when the ellipsis does not
	// fit (bubbles v1.0.0 shouldAddItem): cut every line to the terminal.
	lines := strings.Split(out, "\n")
	for i, l := range lines {
		lines[i] = ansi.Truncate(l, m.width, "…")
	}
	if panel := m.buildPanel(); panel != "" {
		lines = append([]string{panel}, lines...)
	}
	return strings.Join(lines, "\n")
}

// fit cuts or pads s to exactly w columns and h lines.
func fit(s string, w, h int) string {
	lines := strings.Split(s, "\n")
	if len(lines) > h {
		lines = lines[:h]
	}
	for i, l := range lines {
		lines[i] = ansi.Truncate(l, w, "…")
	}
	for len(lines) < h {
		lines = append(lines, "")
	}
	return lipgloss.NewStyle().Width(w).Render(strings.Join(lines, "\n"))
}

// header renders a screen's title with its subtitle beside it when it
// fits, else wrapped below it.
func header(com common.Common, title, subtitle string) string {
	st := com.Styles
	if lipgloss.Width(title)+2+lipgloss.Width(subtitle) <= com.Width {
		return st.Title.Render(title) + "  " + st.Subtle.Render(subtitle) + "\n"
	}
	return st.Title.Render(title) + "\n" + st.Subtle.Render(common.Wrap(subtitle, com.Width)) + "\n"
}
