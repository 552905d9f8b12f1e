package ui

import (
	"strings"
	"testing"

	"github.com/charmbracelet/lipgloss"
)

// checkSize fails when a frame is taller or wider than the terminal.
func checkSize(t *testing.T, out string, w, h int) {
	t.Helper()
	lines := strings.Split(out, "\n")
	if len(lines) > h {
		t.Errorf("frame has %d lines, terminal has %d", len(lines), h)
	}
	for i, l := range lines {
		if lw := lipgloss.Width(l); lw > w {
			t.Errorf("line %d is %d columns wide, terminal has %d: %q", i+1, lw, w, l)
		}
	}
}
