package ui

import (
	"fmt"
	"github.com/ohmytalos/ohmytalos/steps"
	"strings"
	"time"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"

	"github.com/ohmytalos/ohmytalos/internal/engine"
	"github.com/ohmytalos/ohmytalos/ui/common"
	"github.com/ohmytalos/ohmytalos/ui/components"
)

// bootstrapScreen creates the cluster: after confirmation it runs the
// engine from the network step in its goroutine and shows a progress tree
// per step, resource and node, a log pane and the elapsed time.
type bootstrapScreen struct {
	// page is the screen's own copy of the size, styles and keys.
	page
	c       *shared
	confirm components.Confirm
	screenRun
	prog     components.ProgressList
	ready    readiness // the add-ons step's wait, for the status line
	started  time.Time
	finished time.Time
}

func newBootstrap(c *shared, com common.Common) *bootstrapScreen {
	return &bootstrapScreen{c: c, page: page{com}}
}

func (s *bootstrapScreen) enter() tea.Cmd  { return nil }
func (s *bootstrapScreen) capturing() bool { return false }

func (s *bootstrapScreen) help() keyHelp {
	km := s.Keys
	if s.confirm.Open() {
		return keyHelp{short: s.confirm.Help(km)}
	}
	result := s.result
	if result == "" && s.c.deployStatus() == statusDone {
		result = "ok"
	}
	switch result {
	case "running":
		stop := km.Quit
		stop.SetHelp("ctrl+c", "stop (state is saved)")
		return keyHelp{short: []key.Binding{stop}}
	case "ok":
		next := km.Enter
		next.SetHelp("enter", "finish")
		return keyHelp{short: []key.Binding{next}}
	case "failed":
		if s.ready.state != "failed" {
			return keyHelp{short: []key.Binding{km.Retry}}
		}
		missing := km.Enter
		missing.SetHelp("enter", "what is missing")
		return keyHelp{short: []key.Binding{km.Retry, missing}}
	}
	start := km.Enter
	start.SetHelp("enter", "create the cluster")
	return keyHelp{short: []key.Binding{start}}
}

func (s *bootstrapScreen) update(msg tea.Msg) tea.Cmd {
	if k, ok := msg.(tea.KeyMsg); ok {
		return s.key(k)
	}
	if ev, ok := s.runEvent(msg); ok {
		s.prog.Add(ev)
		s.ready.add(ev)
		if s.started.IsZero() {
			s.started = ev.Time
		}
	}
	if s.runDone(msg) {
		s.finished = s.c.now
	}
	return nil
}

func (s *bootstrapScreen) key(k tea.KeyMsg) tea.Cmd {
	km := s.Keys
	if cmd, took := s.confirm.Handle(k, km, s.start); took {
		return cmd
	}
	switch {
	case (s.result == "ok" || s.result == "" && s.c.deployStatus() == statusDone) && key.Matches(k, km.Enter):
		return navCmd(scrDone)
	case s.result == "failed" && s.ready.state == "failed" && key.Matches(k, km.Enter):
		// The cluster exists; the done screen says what it still lacks.
		return navCmd(scrDone)
	case s.result == "running":
		return nil
	case s.result == "failed" && key.Matches(k, km.Retry), s.result == "" && key.Matches(k, km.Enter):
		s.confirm.Ask(s.question())
	}
	return nil
}

// plan says what starting does, before the confirmation.
func (s *bootstrapScreen) plan() string {
	what := "Creates"
	if s.c.deployStatus() != statusPending {
		what = "Resumes creating"
	}
	return fmt.Sprintf("%s the network, placement groups, firewall, load balancer and %d servers, then bootstraps Talos, fetches the kubeconfig, installs the add-ons (Cilium, Hetzner cloud controller and CSI) and waits until every node is Ready. Steps already done are skipped.",
		what, len(s.c.spec.Nodes()))
}

// question says what confirming spends.
func (s *bootstrapScreen) question() string {
	sp := s.c.spec
	n := len(sp.Nodes())
	cost := "cost unknown (prices not loaded)"
	if e := s.c.estimate; e != nil {
		cost = fmt.Sprintf("about %s %s/month net (%s gross), billed by the hour", e.MonthlyNet.Format(2), e.Currency, e.MonthlyGross.Format(2))
		if s.c.backend.Sandbox {
			cost = fmt.Sprintf("nothing is billed (on Hetzner this would cost about %s %s/month net)", e.MonthlyNet.Format(2), e.Currency)
		}
	}
	verb := "Create"
	if s.result == "failed" || s.c.stepStatus(steps.StepNetwork) != engine.StatusPending {
		verb = "Resume creating"
	}
	where := "on Hetzner Cloud"
	if s.c.backend.Sandbox {
		where = "in the sandbox (nothing real is created)"
	}
	return fmt.Sprintf("%s %d servers, the network, placement groups, firewall and load balancer %s: %s. Start?", verb, n, where, cost)
}

// start runs the deploy steps; a retry resumes from the first step that
// is not done.
func (s *bootstrapScreen) start() tea.Cmd {
	opts := engine.Options{From: steps.StepNetwork}
	if s.result == "failed" || s.c.stepStatus(steps.StepNetwork) == engine.StatusDone {
		opts = engine.Options{}
	}
	cmd := s.startEngine(s.c, opts)
	if cmd == nil {
		return nil
	}
	s.prog, s.started, s.finished = components.ProgressList{}, time.Time{}, time.Time{}
	return cmd
}

func (s *bootstrapScreen) view() string {
	c, st := s.c, s.Styles
	var b strings.Builder
	b.WriteString(header(s.Common, "Create and bootstrap", "network, pools, configs, servers, Talos bootstrap, add-ons"))
	el := time.Duration(0)
	if !s.started.IsZero() {
		end := c.now
		if !s.finished.IsZero() {
			end = s.finished
		}
		if end.After(s.started) {
			el = end.Sub(s.started)
		}
	}
	switch s.result {
	case "running":
		b.WriteString(st.Accent.Render("running") + st.Subtle.Render(" elapsed "+el.Round(time.Second).String()) + "\n")
		if s.ready.state == runRunning && s.ready.summary != "" {
			b.WriteString(st.Accent.Render(common.Truncate("waiting for the cluster: "+s.ready.summary, s.Width)) + "\n")
		}
	case "ok":
		b.WriteString(st.Good.Render("✓ cluster bootstrapped") + st.Subtle.Render(" in "+el.Round(time.Second).String()) + "\n")
		if s.ready.summary != "" {
			b.WriteString(st.Good.Render(common.Truncate("✓ "+s.ready.summary, s.Width)) + "\n")
		}
	case "failed":
		b.WriteString(s.failureView(s.Common, s.c.fullErrors, s.Width) + st.Subtle.Render("r resumes from the failed step; finished steps are skipped") + "\n")
	default:
		if c.deployStatus() == statusDone {
			b.WriteString(st.Good.Render("✓ the cluster was bootstrapped in an earlier run") + "\n")
			break
		}
		b.WriteString("\n" + common.Wrap(s.plan(), s.Width) + "\n" + st.Subtle.Render("enter asks once more before anything is created") + "\n")
	}
	if s.confirm.Open() {
		b.WriteString(s.confirm.View(st, s.Width) + "\n")
	}
	b.WriteString(s.noticeView(s.Common, c.fullErrors))
	b.WriteString("\n")
	avail := s.Height - strings.Count(b.String(), "\n")
	tree := s.prog.TreeView(st, s.Width, c.now, max(avail*2/3, 3))
	b.WriteString(tree + "\n" + s.logView(s.Width, max(avail-common.LineCount(tree)-1, 2)))
	return b.String()
}

// logView is the log pane: the latest log lines that fit.
func (s *bootstrapScreen) logView(width, height int) string {
	st := s.Styles
	var lines []string
	lines = append(lines, st.Bold.Render("log"))
	for _, ev := range s.prog.Logs() {
		text := fmt.Sprintf("[%s] %s", ev.Step, ev.Message)
		style := st.Subtle
		switch ev.Kind {
		case engine.KindWarning:
			style, text = st.Warn, fmt.Sprintf("[%s] warning: %s", ev.Step, ev.Message)
		case engine.KindFailed:
			style, text = st.Bad, fmt.Sprintf("[%s] %s", ev.Step, ev.Error)
		}
		lines = append(lines, style.Render(common.Truncate(text, width)))
	}
	if len(lines) > height {
		lines = append(lines[:1], lines[len(lines)-height+1:]...)
	}
	return strings.Join(lines, "\n")
}
