package ui

import (
	"strings"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/ansi"
)

// BuildStatus is a build running beside the wizard (the sandbox's
// Kubernetes control plane, on first use), in plain values so that ui
// imports no sandbox: Backend.Build returns it.
type BuildStatus struct {
	// Headline says what builds and why, in one line.
	Headline string
	// Programs has a line per binary: its progress, the elapsed and the
	// expected time.
	Programs []string
	// Summary is the whole build in one line, for the screens after the
	// first.
	Summary string
	// Done is set once the build is over; Err says why it failed.
	Done bool
	Err  error
}

// buildMsg carries the build's status to the root.
type buildMsg BuildStatus

// buildPoll is how often the wizard reads the build's status.
const buildPoll = time.Second

// buildCmd reads the build's status, after wait (0: now).
func buildCmd(b Backend, wait time.Duration) tea.Cmd {
	if b.Build == nil {
		return nil
	}
	read := func(time.Time) tea.Msg { return buildMsg(b.Build()) }
	if wait <= 0 {
		return func() tea.Msg { return read(time.Time{}) }
	}
	return tea.Tick(wait, read)
}

// onBuild records the build's status, lays the shell out again when its
// panel changes size, and polls again until the build is over.
func (m *Model) onBuild(msg buildMsg) tea.Cmd {
	before := len(m.buildLines())
	m.build = BuildStatus(msg)
	if len(m.buildLines()) != before {
		m.resize(m.width, m.height)
	}
	if m.build.Done {
		return nil
	}
	every := m.buildEvery
	if every <= 0 {
		every = buildPoll
	}
	return buildCmd(m.c.backend, every)
}

// buildLines are the build panel above the keys: the headline and a line
// per binary on the first screen, one line on the others, the failure
// until the wizard ends; nothing once it is built.
func (m *Model) buildLines() []string {
	b, st := m.build, m.com.Styles
	switch {
	case m.c == nil || m.c.backend.Build == nil || (b.Done && b.Err == nil) || b.Headline == "":
		return nil
	case b.Err != nil:
		first, _, _ := strings.Cut(b.Err.Error(), "\n")
		return []string{st.Bad.Render("✗ ") + st.Warn.Render(first),
			st.Subtle.Render("  The steps that need Kubernetes will fail; everything else works. Details in the log.")}
	case m.active == scrWelcome:
		lines := []string{st.Accent.Render("⟳ ") + b.Headline}
		for _, p := range b.Programs {
			lines = append(lines, st.Subtle.Render("  "+p))
		}
		return lines
	}
	return []string{st.Accent.Render("⟳ ") + st.Subtle.Render(b.Summary)}
}

// buildPanel is buildLines cut to the terminal, or "" without a build.
func (m *Model) buildPanel() string {
	lines := m.buildLines()
	for i, l := range lines {
		lines[i] = ansi.Truncate(l, m.width, "…")
	}
	return strings.Join(lines, "\n")
}
