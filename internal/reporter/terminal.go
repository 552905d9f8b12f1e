package reporter

import (
	"fmt"
	"io"
	"strings"
	"sync"

	"github.com/charmbracelet/lipgloss"
	"github.com/muesli/termenv"

	"github.com/ohmytalos/ohmytalos/internal/engine"
)

// Terminal prints engine events for a person at a terminal: a
// glyph and colour per kind, and progress only when a resource's stage
// changes or a quarter more is done, so long waits do not flood the
// screen. Scripts get every event from the plain or JSON renderers.
func Terminal(w io.Writer, noColor bool) func(engine.Event) {
	r := lipgloss.NewRenderer(w)
	if noColor {
		r.SetColorProfile(termenv.Ascii)
	}
	var (
		good = r.NewStyle().Foreground(lipgloss.Color("2"))
		warn = r.NewStyle().Foreground(lipgloss.Color("3"))
		bad  = r.NewStyle().Foreground(lipgloss.Color("1")).Bold(true)
		dim  = r.NewStyle().Faint(true)
		head = r.NewStyle().Bold(true)
	)
	var mu sync.Mutex
	type seen struct {
		stage   string
		quarter int
	}
	last := map[string]seen{}
	return func(ev engine.Event) {
		mu.Lock()
		defer mu.Unlock()
		var line string
		switch ev.Kind {
		case engine.KindStarted:
			line = head.Render("▶ " + ev.Message)
		case engine.KindDone:
			line = good.Render("✓ "+ev.Message) + dim.Render(fmt.Sprintf(" (%s)", ev.Elapsed.Round(100_000_000)))
		case engine.KindSkipped:
			line = dim.Render("· " + ev.Message)
		case engine.KindFailed:
			line = bad.Render("✗ " + ev.Error)
		case engine.KindWarning:
			line = warn.Render("! " + strings.TrimSpace(ev.Resource+" "+ev.Message))
		case engine.KindResource:
			line = fmt.Sprintf("  %s %s", good.Render(string(ev.Action)), ev.Resource)
			if ev.Message != "" {
				line += dim.Render(": " + ev.Message)
			}
		case engine.KindProgress:
			stage, _, _ := strings.Cut(ev.Message, ":")
			q := int(ev.Fraction * 4)
			if prev, ok := last[ev.Resource]; ok && prev.stage == stage && prev.quarter == q {
				return
			}
			last[ev.Resource] = seen{stage, q}
			line = dim.Render("  … " + strings.TrimSpace(ev.Resource+" "+ev.Message))
		default:
			line = dim.Render("  " + ev.Message)
		}
		fmt.Fprintln(w, line)
	}
}
