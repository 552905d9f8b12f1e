package components

import (
	"fmt"
	"github.com/ohmytalos/ohmytalos/internal/reporter"
	"regexp"
	"strings"
	"time"

	"github.com/ohmytalos/ohmytalos/internal/engine"
	"github.com/ohmytalos/ohmytalos/ui/common"
)

// ProgressList folds engine events into a tree: steps, and under each the
// resources (images, servers, nodes) with their latest stage, progress and
// bytes; plus the log lines. It is shared by the images and bootstrap
// pages. The zero value is empty and ready.
type ProgressList struct {
	steps []*stepProgress
	logs  []engine.Event
}

// stepProgress is one step of a run.
type stepProgress struct {
	name    string
	state   string // running, done, failed, skipped
	started time.Time
	elapsed time.Duration
	err     string
	rows    []*resourceProgress
}

// resourceProgress is one resource of a step.
type resourceProgress struct {
	name         string
	action       string
	stage        string
	fraction     float64
	bytes, total int64
	done         bool
}

// maxLogLines bounds the log pane's memory.
const maxLogLines = 500

func (p *ProgressList) step(name string) *stepProgress {
	for _, s := range p.steps {
		if s.name == name {
			return s
		}
	}
	s := &stepProgress{name: name, state: "running"}
	p.steps = append(p.steps, s)
	return s
}

func (s *stepProgress) row(name string) *resourceProgress {
	for _, r := range s.rows {
		if r.name == name {
			return r
		}
	}
	r := &resourceProgress{name: name}
	s.rows = append(s.rows, r)
	return r
}

// Add folds one event in.
func (p *ProgressList) Add(ev engine.Event) {
	s := p.step(string(ev.Step))
	switch ev.Kind {
	case engine.KindStarted:
		s.state, s.started, s.err = "running", ev.Time, ""
	case engine.KindDone:
		s.state, s.elapsed = "done", ev.Elapsed
		for _, r := range s.rows {
			r.done = true
		}
	case engine.KindSkipped:
		s.state = "skipped"
	case engine.KindFailed:
		s.state, s.err = "failed", ev.Error
		p.log(ev)
	case engine.KindResource:
		r := s.row(ev.Resource)
		r.action, r.done = string(ev.Action), true
		if ev.Message != "" {
			r.stage = ev.Message
		}
	case engine.KindProgress:
		name := ev.Resource
		if name == "" {
			name = string(ev.Step)
		}
		r := s.row(name)
		// A resource whose progress is complete has what it waited for
		// (a node Ready); it can fall back, as a node can.
		r.stage, r.fraction, r.done = ev.Message, ev.Fraction, ev.Fraction >= 1
		if ev.Bytes > 0 || ev.Total > 0 {
			r.bytes, r.total = ev.Bytes, ev.Total
		}
	case engine.KindLog, engine.KindWarning:
		p.log(ev)
	}
}

func (p *ProgressList) log(ev engine.Event) {
	p.logs = append(p.logs, ev)
	if len(p.logs) > maxLogLines {
		p.logs = p.logs[len(p.logs)-maxLogLines:]
	}
}

// Logs are the log and warning events, the newest last (at most
// maxLogLines).
func (p *ProgressList) Logs() []engine.Event { return p.logs }

// View renders the resources without the step level.
func (p *ProgressList) View(st common.Styles, width int) string {
	return p.render(st, width, time.Time{}, false, false)
}

// TreeView renders steps with their resources and elapsed times (now is
// the UI's latest time, for running steps) in at most height lines: when
// the tree is taller, finished steps fold to one line each, then the
// oldest lines are dropped.
func (p *ProgressList) TreeView(st common.Styles, width int, now time.Time, height int) string {
	out := p.render(st, width, now, true, false)
	if common.LineCount(out) > height {
		out = p.render(st, width, now, true, true)
	}
	return common.Tail(out, height)
}

func (p *ProgressList) render(st common.Styles, width int, now time.Time, tree, fold bool) string {
	var b strings.Builder
	for _, s := range p.steps {
		if tree {
			glyph, style := "◌", st.Accent
			switch s.state {
			case "done":
				glyph, style = "✓", st.Good
			case "skipped":
				glyph, style = "✓", st.Subtle
			case "failed":
				glyph, style = "✗", st.Bad
			}
			el := s.elapsed
			if s.state == "running" && !s.started.IsZero() && now.After(s.started) {
				el = now.Sub(s.started)
			}
			line := style.Render(glyph) + " " + st.Bold.Render(s.name)
			if el > 0 {
				line += st.Subtle.Render(" " + el.Round(100*time.Millisecond).String())
			}
			if s.state == "skipped" {
				line += st.Subtle.Render(" done in an earlier run")
			}
			if fold && s.state == "done" && len(s.rows) > 0 {
				line += st.Subtle.Render(fmt.Sprintf(" %d resource(s)", len(s.rows)))
				b.WriteString(line + "\n")
				continue
			}
			b.WriteString(line + "\n")
			if s.err != "" {
				b.WriteString(common.Indent(st.Bad.Render(strings.Join(common.WrapLines(s.err, width-2), "\n")), 2) + "\n")
			}
		}
		for i, r := range s.rows {
			prefix := "  "
			if tree {
				prefix = "  ├ "
				if i == len(s.rows)-1 {
					prefix = "  └ "
				}
			}
			b.WriteString(prefix + r.view(st, width-len(prefix)) + "\n")
		}
	}
	return b.String()
}

func (r *resourceProgress) view(st common.Styles, width int) string {
	glyph := st.Accent.Render("●")
	if r.done {
		glyph = st.Good.Render("✓")
	}
	parts := []string{glyph + " " + r.name}
	if r.action != "" {
		parts = append(parts, st.Subtle.Render(r.action))
	}
	showBar := !r.done && (r.fraction > 0 || r.total > 0)
	if stage := r.stage; stage != "" {
		if showBar { // the bar has its own percentage: never print it twice
			stage = strings.TrimSpace(trailingPercent.ReplaceAllString(stage, ""))
		}
		if stage != "" {
			parts = append(parts, stage)
		}
	}
	if showBar {
		f := r.fraction
		if f == 0 && r.total > 0 {
			f = float64(r.bytes) / float64(r.total)
		}
		parts = append(parts, bar(f, 12), fmt.Sprintf("%3.0f%%", f*100))
	}
	if r.bytes > 0 {
		if r.total > 0 {
			parts = append(parts, st.Subtle.Render(reporter.HumanBytes(r.bytes)+"/"+reporter.HumanBytes(r.total)))
		} else {
			parts = append(parts, st.Subtle.Render(reporter.HumanBytes(r.bytes)))
		}
	}
	return strings.Join(parts, " ")
}

// trailingPercent is a percentage at the end of a stage message.
var trailingPercent = regexp.MustCompile(`\s*\(?\d{1,3}(\.\d+)?\s?%\)?$`)

// bar draws a progress bar of width cells for a fraction in 0..1.
func bar(f float64, width int) string {
	f = min(max(f, 0), 1)
	n := int(f*float64(width) + 0.5)
	return strings.Repeat("█", n) + strings.Repeat("░", width-n)
}
