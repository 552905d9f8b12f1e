package ui

import (
	"os"

	"github.com/charmbracelet/bubbles/help"
	"github.com/charmbracelet/lipgloss"
	"github.com/muesli/termenv"
)

// Styles is every style of the wizard, built once by NewStyles and passed
// down to the screens.
type Styles struct {
	App       lipgloss.Style
	Title     lipgloss.Style
	Subtle    lipgloss.Style
	Bold      lipgloss.Style
	Good      lipgloss.Style
	Warn      lipgloss.Style
	Bad       lipgloss.Style
	Accent    lipgloss.Style
	Selected  lipgloss.Style
	Sidebar   lipgloss.Style
	StatusBar lipgloss.Style
	Sandbox   lipgloss.Style
	Box       lipgloss.Style
	Label     lipgloss.Style
	Help      help.Styles
	renderer  *lipgloss.Renderer
}

// NewStyles builds the styles on renderer r (a new renderer on stdout
// when nil; the package-wide default renderer is never changed); noColor
// drops every colour (bold, reverse and borders stay).
func NewStyles(r *lipgloss.Renderer, noColor bool) Styles {
	if r == nil {
		r = lipgloss.NewRenderer(os.Stdout)
	}
	if noColor {
		r.SetColorProfile(termenv.Ascii)
	}
	accent := lipgloss.AdaptiveColor{Light: "#5A3FC0", Dark: "#9B87F5"}
	subtle := lipgloss.AdaptiveColor{Light: "#8A8A8A", Dark: "#767676"}
	good := lipgloss.AdaptiveColor{Light: "#1E8C45", Dark: "#4CD07D"}
	warn := lipgloss.AdaptiveColor{Light: "#B37400", Dark: "#F2B84B"}
	bad := lipgloss.AdaptiveColor{Light: "#C0392B", Dark: "#FF6B6B"}
	s := Styles{renderer: r}
	s.App = r.NewStyle()
	s.Title = r.NewStyle().Bold(true).Foreground(accent)
	s.Subtle = r.NewStyle().Foreground(subtle)
	s.Bold = r.NewStyle().Bold(true)
	s.Good = r.NewStyle().Foreground(good)
	s.Warn = r.NewStyle().Foreground(warn)
	s.Bad = r.NewStyle().Foreground(bad).Bold(true)
	s.Accent = r.NewStyle().Foreground(accent)
	s.Selected = r.NewStyle().Bold(true).Foreground(accent)
	s.Sidebar = r.NewStyle().BorderStyle(lipgloss.NormalBorder()).BorderRight(true).BorderForeground(subtle).PaddingRight(1)
	s.StatusBar = r.NewStyle().Bold(true)
	s.Sandbox = r.NewStyle().Bold(true).Reverse(true).Foreground(warn)
	s.Box = r.NewStyle().BorderStyle(lipgloss.RoundedBorder()).BorderForeground(subtle).Padding(0, 1)
	s.Label = r.NewStyle().Foreground(subtle).Width(14)
	s.Help = help.Styles{
		Ellipsis:       r.NewStyle().Foreground(subtle),
		ShortKey:       r.NewStyle().Foreground(accent),
		ShortDesc:      r.NewStyle().Foreground(subtle),
		ShortSeparator: r.NewStyle().Foreground(subtle),
		FullKey:        r.NewStyle().Foreground(accent),
		FullDesc:       r.NewStyle().Foreground(subtle),
		FullSeparator:  r.NewStyle().Foreground(subtle),
	}
	return s
}
