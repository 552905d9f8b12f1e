package theme

import (
	"io"
	"strings"
	"testing"

	"github.com/charmbracelet/lipgloss"
	"github.com/muesli/termenv"
)

func renderer(p termenv.Profile) *lipgloss.Renderer {
	r := lipgloss.NewRenderer(io.Discard)
	r.SetColorProfile(p)
	r.SetHasDarkBackground(true)
	return r
}

func TestNoColorWritesNoEscapes(t *testing.T) {
	th := New(renderer(termenv.TrueColor), true)
	if got := th.Subtle.Render("x"); got != "x" {
		t.Errorf("subtle without colour = %q, want plain x", got)
	}
	if got := th.Sandbox.Render("SANDBOX"); got != "SANDBOX" {
		t.Errorf("sandbox badge without colour = %q, want plain SANDBOX", got)
	}
}

func TestColoursFollowThePalette(t *testing.T) {
	th := New(renderer(termenv.TrueColor), false)
	// #767676 on a dark background is 118,118,118; #9B87F5 is 155,135,245.
	if got := th.Subtle.Render("x"); !strings.Contains(got, "38;2;118;118;118") {
		t.Errorf("subtle = %q, want the dark subtle colour", got)
	}
	if got := th.Help.ShortKey.Render("q"); !strings.Contains(got, "38;2;155;135;245") {
		t.Errorf("help key = %q, want the dark accent colour", got)
	}
	if p := DefaultPalette(); th.Palette != p {
		t.Errorf("palette = %+v, want the default %+v", th.Palette, p)
	}
}
