package ui

import (
	"fmt"
	"github.com/ohmytalos/ohmytalos/internal/reporter"
	"strings"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"

	"github.com/ohmytalos/ohmytalos/internal/engine"
	"github.com/ohmytalos/ohmytalos/internal/netplan"
	"github.com/ohmytalos/ohmytalos/internal/spec"
	"github.com/ohmytalos/ohmytalos/ui/common"
	"github.com/ohmytalos/ohmytalos/ui/components"
)

// reviewScreen shows the spec's problems, every step's plan and the cost,
// and writes the spec file once the operator confirms.
type reviewScreen struct {
	// page is the screen's own copy of the size, styles and keys.
	page
	c        *shared
	problems spec.Problems
	planning bool
	plans    []engine.Plan
	planErr  string
	scroll   int
	confirm  components.Confirm
	saveErr  string
	planHash string
	// preflight holds the pre-flight findings of the spec planned.
	preflight preflightPanel
}

func newReview(c *shared, com common.Common) *reviewScreen {
	return &reviewScreen{c: c, page: page{com}}
}

func (s *reviewScreen) enter() tea.Cmd {
	// spec.Validate checks the layout too; the findings of the (possibly
	// caller-provided) Adapt add what it did not report.
	base := s.c.spec.Validate()
	s.problems = base
	for _, f := range s.c.findings {
		if f.Severity == netplan.SeverityError && !base.Has(f.Field) {
			s.problems = append(s.problems, spec.Problem{Field: f.Field, Reason: f.Message, Fix: f.Fix})
		}
	}
	if h := s.c.spec.Hash(); h != s.planHash {
		s.planHash, s.planning, s.plans, s.planErr, s.scroll = h, true, nil, "", 0
		pre := preflightCmd(s.c.ctx, s.c.backend, cloneSpec(s.c.spec))
		if pre != nil {
			s.preflight.start(h)
		}
		return tea.Batch(planCmd(s.c.ctx, s.c.backend, cloneSpec(s.c.spec)), pre)
	}
	return nil
}

func (s *reviewScreen) capturing() bool { return false }

func (s *reviewScreen) help() keyHelp {
	km := s.Keys
	if s.confirm.Open() {
		return keyHelp{short: s.confirm.Help(km)}
	}
	if s.c.isSaved() {
		next := km.Enter
		next.SetHelp("enter", "go to bootstrap")
		return keyHelp{short: []key.Binding{km.ScrollUp, km.ScrollDown, next}}
	}
	return keyHelp{short: []key.Binding{km.ScrollUp, km.ScrollDown, km.Save}}
}

func (s *reviewScreen) update(msg tea.Msg) tea.Cmd {
	switch msg := msg.(type) {
	case PlanMsg:
		s.planning = false
		s.plans = msg.Plans
		if msg.Err != nil {
			s.planErr = msg.Err.Error()
		}
	case PreflightMsg:
		s.preflight.receive(msg)
	case SavedMsg:
		if msg.Err != nil {
			s.saveErr = msg.Err.Error()
			return nil
		}
		s.saveErr = ""
	case tea.KeyMsg:
		return s.key(msg)
	}
	return nil
}

func (s *reviewScreen) key(k tea.KeyMsg) tea.Cmd {
	km := s.Keys
	if s.confirm.Open() {
		if done, yes := s.confirm.Answer(k, km); done && yes {
			return saveCmd(cloneSpec(s.c.spec), s.c.backend.SpecPath, s.c.spec.Hash())
		}
		return nil
	}
	switch {
	case key.Matches(k, km.ScrollUp):
		s.scroll = max(s.scroll-1, 0)
	case key.Matches(k, km.ScrollDown):
		s.scroll++
	case key.Matches(k, km.Enter) && s.c.isSaved():
		return navCmd(scrBootstrap)
	case key.Matches(k, km.Save, km.Enter):
		if len(s.problems) > 0 {
			s.saveErr = fmt.Sprintf("the spec has %d problem(s): fix them on the earlier screens first", len(s.problems))
			return nil
		}
		if s.preflight.running {
			s.saveErr = "pre-flight is still checking with Hetzner: wait for its findings"
			return nil
		}
		if n := s.preflight.errors(); n > 0 {
			s.saveErr = fmt.Sprintf("pre-flight found %d error(s) that would stop apply: fix them first (each says how)", n)
			return nil
		}
		s.confirm.Ask(fmt.Sprintf("Write the spec to %s? It holds references to secrets, never their values.", s.c.backend.SpecPath))
	}
	return nil
}

func (s *reviewScreen) view() string {
	c, st := s.c, s.Styles
	var top strings.Builder
	top.WriteString(header(s.Common, "Review", "what apply will do, and what it costs") + "\n")
	if len(s.problems) > 0 {
		top.WriteString(st.Bad.Render(fmt.Sprintf("%d problem(s):", len(s.problems))) + "\n")
		for _, p := range s.problems {
			top.WriteString(st.Bad.Render(common.Wrap("✗ "+p.String(), s.Width)) + "\n")
		}
	}
	top.WriteString(s.preflight.view(c, s.Common))
	if s.confirm.Open() {
		top.WriteString(s.confirm.View(st, s.Width) + "\n")
	}
	switch {
	case s.saveErr != "":
		top.WriteString(st.Bad.Render(common.Wrap(s.saveErr, s.Width)) + "\n")
	case c.isSaved():
		top.WriteString(st.Good.Render("✓ spec written to "+c.backend.SpecPath) + "\n")
	}
	var body strings.Builder
	switch {
	case s.planning:
		body.WriteString(st.Subtle.Render("planning…") + "\n")
	case s.planErr != "":
		body.WriteString(st.Bad.Render(common.Wrap("plan failed: "+s.planErr, s.Width)) + "\n")
	}
	for _, p := range s.plans {
		body.WriteString(fmt.Sprintf("%s %s\n", st.Bold.Render(fmt.Sprintf("%-10s", p.Step)),
			st.Subtle.Render(fmt.Sprintf("%d to create, %d to reuse, %d to update, %d to delete",
				p.Count(engine.ActionCreate), p.Count(engine.ActionReuse), p.Count(engine.ActionUpdate), p.Count(engine.ActionDelete)))))
		for _, it := range p.Items {
			line := fmt.Sprintf("%s %s %s", actionGlyph(st, it.Action), it.Kind, it.Name)
			if it.Detail != "" {
				line += st.Subtle.Render(" " + it.Detail)
			}
			body.WriteString(common.Indent(common.Wrap(line, s.Width-2), 2) + "\n")
			for _, ch := range it.Changes {
				body.WriteString(toneStyle(st, reporter.ActionTone(it.Action)).Render(common.Indent(common.Wrap(ch.String(), s.Width-4), 4)) + "\n")
			}
		}
		for _, n := range p.Notes {
			body.WriteString(st.Subtle.Render(common.Indent(common.Wrap("note: "+n, s.Width-2), 2)) + "\n")
		}
	}
	cost := components.CostPanel(st, c.cost(), min(s.Width, 64), false)
	avail := s.Height - strings.Count(top.String(), "\n") - common.LineCount(cost) - 1
	lines := strings.Split(strings.TrimRight(body.String(), "\n"), "\n")
	scroll := min(s.scroll, max(len(lines)-avail, 0))
	if avail > 0 && len(lines) > 0 {
		lines = lines[scroll:min(len(lines), scroll+avail)]
	}
	return top.String() + strings.Join(lines, "\n") + "\n\n" + cost
}

// actionGlyph marks a plan item's action.
func actionGlyph(st Styles, action engine.Action) string {
	switch action {
	case engine.ActionCreate:
		return st.Good.Render("+")
	case engine.ActionReuse:
		return st.Subtle.Render("=")
	case engine.ActionUpdate:
		return st.Warn.Render("~")
	case engine.ActionReplace:
		return st.Bad.Render("!")
	case engine.ActionDelete:
		return st.Bad.Render("-")
	}
	return " "
}

// toneStyle is the style of an engine tone.
func toneStyle(st Styles, t reporter.Tone) lipgloss.Style {
	switch t {
	case reporter.ToneGood:
		return st.Good
	case reporter.ToneBad:
		return st.Bad
	case reporter.ToneActive:
		return st.Warn
	}
	return st.Subtle
}
