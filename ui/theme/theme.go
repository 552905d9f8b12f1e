// Package theme is the palette and the base styles that the wizard (package
// ui) and the doctor screen (package ui/doctorui) share, so both look alike
// and a colour is changed in one place. It imports neither of them.
package theme

import (
	"github.com/charmbracelet/bubbles/help"
	"github.com/charmbracelet/lipgloss"
	"github.com/muesli/termenv"
)

// Palette is the colours of the UI, each with a light and a dark variant
// that lipgloss picks by the terminal's background.
type Palette struct {
	// Accent marks titles, the selection and key names.
	Accent lipgloss.AdaptiveColor
	// Subtle is for secondary text and borders.
	Subtle lipgloss.AdaptiveColor
	// Good is for success.
	Good lipgloss.AdaptiveColor
	// Warn is for warnings and the SANDBOX badge.
	Warn lipgloss.AdaptiveColor
	// Bad is for failures.
	Bad lipgloss.AdaptiveColor
}

// DefaultPalette returns the project's palette.
func DefaultPalette() Palette {
	return Palette{
		Accent: lipgloss.AdaptiveColor{Light: "#5A3FC0", Dark: "#9B87F5"},
		Subtle: lipgloss.AdaptiveColor{Light: "#8A8A8A", Dark: "#767676"},
		Good:   lipgloss.AdaptiveColor{Light: "#1E8C45", Dark: "#4CD07D"},
		Warn:   lipgloss.AdaptiveColor{Light: "#B37400", Dark: "#F2B84B"},
		Bad:    lipgloss.AdaptiveColor{Light: "#C0392B", Dark: "#FF6B6B"},
	}
}

// Theme is the palette and the styles built from it on one renderer.
type Theme struct {
	// Palette is the colours the styles use.
	Palette Palette
	// Title is a screen's title: bold accent.
	Title lipgloss.Style
	// Selected is the selected item: bold accent.
	Selected lipgloss.Style
	// Accent is accent text.
	Accent lipgloss.Style
	// Subtle is secondary text.
	Subtle lipgloss.Style
	// Bold is plain bold text.
	Bold lipgloss.Style
	// Sandbox is the SANDBOX badge: bold, reversed warn colour.
	Sandbox lipgloss.Style
	// Help styles the key help footer.
	Help help.Styles
}

// New builds the theme on renderer r, which must not be nil (the caller
// picks its renderer); noColor sets r to the ASCII profile, under which
// termenv writes no escape sequence at all (termenv v0.16.0 style.go,
// Style.Styled): colours, bold and reverse go, borders and widths stay.
func New(r *lipgloss.Renderer, noColor bool) Theme {
	if noColor {
		r.SetColorProfile(termenv.Ascii)
	}
	p := DefaultPalette()
	fg := func(c lipgloss.TerminalColor) lipgloss.Style { return r.NewStyle().Foreground(c) }
	return Theme{
		Palette:  p,
		Title:    r.NewStyle().Bold(true).Foreground(p.Accent),
		Selected: r.NewStyle().Bold(true).Foreground(p.Accent),
		Accent:   fg(p.Accent),
		Subtle:   fg(p.Subtle),
		Bold:     r.NewStyle().Bold(true),
		Sandbox:  r.NewStyle().Bold(true).Reverse(true).Foreground(p.Warn),
		Help: help.Styles{
			Ellipsis:       fg(p.Subtle),
			ShortKey:       fg(p.Accent),
			ShortDesc:      fg(p.Subtle),
			ShortSeparator: fg(p.Subtle),
			FullKey:        fg(p.Accent),
			FullDesc:       fg(p.Subtle),
			FullSeparator:  fg(p.Subtle),
		},
	}
}
