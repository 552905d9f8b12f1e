package doctorui

import (
	"github.com/charmbracelet/bubbles/help"
	"github.com/charmbracelet/lipgloss"

	"github.com/ohmytalos/ohmytalos/internal/doctor"
	"github.com/ohmytalos/ohmytalos/ui/theme"
)

// Styles is every style of the doctor screen, built once by NewStyles.
type Styles struct {
	// Title is the screen's title.
	Title lipgloss.Style
	// Sandbox is the SANDBOX badge.
	Sandbox lipgloss.Style
	// Subtle is for secondary text (reasons, notes, summary).
	Subtle lipgloss.Style
	// Bold is for headings in the detail view.
	Bold lipgloss.Style
	// Cursor marks the selected row.
	Cursor lipgloss.Style
	// Selected is the selected row's check ID.
	Selected lipgloss.Style
	// ID is a check ID in the list.
	ID lipgloss.Style
	// Spinner is the running spinner.
	Spinner lipgloss.Style
	// Badges are the status badges by status.
	Badges map[doctor.Status]lipgloss.Style
	// Rule is the line under the header.
	Rule lipgloss.Style
	// Help styles the key help footer.
	Help help.Styles
}

// NewStyles builds the styles on renderer r (lipgloss's default when nil);
// noColor drops every escape sequence, colours, bold and reverse alike
// (see theme.New).
func NewStyles(r *lipgloss.Renderer, noColor bool) Styles {
	if r == nil {
		r = lipgloss.DefaultRenderer()
	}
	t := theme.New(r, noColor)
	p := t.Palette
	badge := func(c lipgloss.TerminalColor) lipgloss.Style {
		return r.NewStyle().Bold(true).Foreground(c).Width(badgeWidth)
	}
	return Styles{
		Title:    t.Title,
		Sandbox:  t.Sandbox,
		Subtle:   t.Subtle,
		Bold:     t.Bold,
		Cursor:   t.Selected,
		Selected: t.Selected,
		ID:       r.NewStyle(),
		Spinner:  t.Accent,
		Rule:     t.Subtle,
		Badges: map[doctor.Status]lipgloss.Style{
			doctor.StatusPass:    badge(p.Good),
			doctor.StatusWarn:    badge(p.Warn),
			doctor.StatusFail:    badge(p.Bad),
			doctor.StatusError:   badge(p.Bad),
			doctor.StatusSkip:    badge(p.Subtle),
			doctor.StatusRunning: badge(p.Accent),
			doctor.StatusPending: badge(p.Subtle),
		},
		Help: t.Help,
	}
}

// badgeWidth fits the longest badge, "ERROR", and a space.
const badgeWidth = 6

// badge renders a status as its fixed-width badge.
func (s Styles) badge(st doctor.Status) string {
	label := map[doctor.Status]string{
		doctor.StatusPass: "PASS", doctor.StatusWarn: "WARN", doctor.StatusFail: "FAIL",
		doctor.StatusError: "ERROR", doctor.StatusSkip: "SKIP", doctor.StatusPending: "…",
	}[st]
	if label == "" {
		label = string(st)
	}
	return s.Badges[st].Render(label)
}
