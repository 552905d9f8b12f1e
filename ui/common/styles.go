package common

import (
	"os"

	"github.com/charmbracelet/bubbles/help"
	"github.com/charmbracelet/lipgloss"

	"github.com/ohmytalos/ohmytalos/ui/theme"
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

// Renderer is the renderer the styles were built on (the doctor screen
// builds its own styles on it).
func (s Styles) Renderer() *lipgloss.Renderer { return s.renderer }

// NewStyles builds the styles on renderer r (a new renderer on stdout
// when nil; the package-wide default renderer is never changed); noColor
// drops every escape sequence: colours, bold and reverse (borders and
// widths stay; see theme.New).
func NewStyles(r *lipgloss.Renderer, noColor bool) Styles {
	if r == nil {
		r = lipgloss.NewRenderer(os.Stdout)
	}
	t := theme.New(r, noColor)
	p := t.Palette
	s := Styles{renderer: r, Title: t.Title, Subtle: t.Subtle, Bold: t.Bold, Accent: t.Accent,
		Selected: t.Selected, Sandbox: t.Sandbox, Help: t.Help}
	s.App = r.NewStyle()
	s.Good = r.NewStyle().Foreground(p.Good)
	s.Warn = r.NewStyle().Foreground(p.Warn)
	s.Bad = r.NewStyle().Foreground(p.Bad).Bold(true)
	s.Sidebar = r.NewStyle().BorderStyle(lipgloss.NormalBorder()).BorderRight(true).BorderForeground(p.Subtle).PaddingRight(1)
	s.StatusBar = r.NewStyle().Bold(true)
	s.Box = r.NewStyle().BorderStyle(lipgloss.RoundedBorder()).BorderForeground(p.Subtle).Padding(0, 1)
	s.Label = r.NewStyle().Foreground(p.Subtle).Width(14)
	return s
}
