package doctorui

import (
	"github.com/charmbracelet/bubbles/help"
	"github.com/charmbracelet/lipgloss"
	"github.com/muesli/termenv"

	"github.com/ohmytalos/ohmytalos/internal/doctor"
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
// noColor drops every colour (bold and reverse stay).
func NewStyles(r *lipgloss.Renderer, noColor bool) Styles {
	if r == nil {
		r = lipgloss.DefaultRenderer()
	}
	if noColor {
		r.SetColorProfile(termenv.Ascii)
	}
	accent := lipgloss.AdaptiveColor{Light: "#5A3FC0", Dark: "#9B87F5"}
	subtle := lipgloss.AdaptiveColor{Light: "#8A8A8A", Dark: "#767676"}
	good := lipgloss.AdaptiveColor{Light: "#1E8C45", Dark: "#4CD07D"}
	warn := lipgloss.AdaptiveColor{Light: "#B37400", Dark: "#F2B84B"}
	bad := lipgloss.AdaptiveColor{Light: "#C0392B", Dark: "#FF6B6B"}
	badge := func(c lipgloss.TerminalColor) lipgloss.Style {
		return r.NewStyle().Bold(true).Foreground(c).Width(badgeWidth)
	}
	s := Styles{
		Title:    r.NewStyle().Bold(true).Foreground(accent),
		Sandbox:  r.NewStyle().Bold(true).Reverse(true).Foreground(warn),
		Subtle:   r.NewStyle().Foreground(subtle),
		Bold:     r.NewStyle().Bold(true),
		Cursor:   r.NewStyle().Bold(true).Foreground(accent),
		Selected: r.NewStyle().Bold(true).Foreground(accent),
		ID:       r.NewStyle(),
		Spinner:  r.NewStyle().Foreground(accent),
		Rule:     r.NewStyle().Foreground(subtle),
		Badges: map[doctor.Status]lipgloss.Style{
			doctor.StatusPass:    badge(good),
			doctor.StatusWarn:    badge(warn),
			doctor.StatusFail:    badge(bad),
			doctor.StatusError:   badge(bad),
			doctor.StatusSkip:    badge(subtle),
			doctor.StatusRunning: badge(accent),
			doctor.StatusPending: badge(subtle),
		},
		Help: help.Styles{
			Ellipsis:       r.NewStyle().Foreground(subtle),
			ShortKey:       r.NewStyle().Foreground(accent),
			ShortDesc:      r.NewStyle().Foreground(subtle),
			ShortSeparator: r.NewStyle().Foreground(subtle),
			FullKey:        r.NewStyle().Foreground(accent),
			FullDesc:       r.NewStyle().Foreground(subtle),
			FullSeparator:  r.NewStyle().Foreground(subtle),
		},
	}
	return s
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
