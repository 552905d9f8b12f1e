package ui

import (
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"
)

// A long error wraps inside the pane (no line cut with "…"); its first
// lines show with a hint, and ctrl+o shows all of it.
func TestLongErrorWrapsAndShowsWhole(t *testing.T) {
	h, _ := newHarness(t, Options{Width: 110, Height: 40})
	h.Settle()
	h.open(scrSecrets)
	s := h.m.screens[scrSecrets].(*secretsScreen)
	words := strings.Repeat("secret bw:0b1d2c3e-4f50-4a6b-8c7d-9e0f1a2b3c4d could not be read from http://127.0.0.1:8087/object/password ", 12)
	s.result, s.err = runFailed, "secrets: "+words+"THE-END"
	flat := func(view string) string {
		var b strings.Builder
		for _, l := range strings.Split(ansi.Strip(view), "\n") {
			if _, pane, ok := strings.Cut(l, "│ "); ok {
				b.WriteString(strings.TrimRight(pane, " ") + " ")
			}
		}
		return b.String()
	}
	view := h.m.View()
	for _, l := range strings.Split(view, "\n") {
		if strings.HasSuffix(strings.TrimRight(l, " "), "…") && strings.Contains(l, "bw:") {
			t.Errorf("error line cut at the pane edge: %q", l)
		}
	}
	if !strings.Contains(view, "more lines: ctrl+o shows the whole error") || strings.Contains(flat(view), "THE-END") {
		t.Errorf("a long error is not shortened with a hint:\n%s", view)
	}
	if !strings.Contains(h.m.footer(), "ctrl+o whole error") {
		t.Errorf("footer lacks the key: %q", h.m.footer())
	}
	h.Key("ctrl+o")
	view = h.m.View()
	if !strings.Contains(flat(view), "THE-END") || strings.Contains(view, "more lines") {
		t.Errorf("ctrl+o did not show the whole error:\n%s", view)
	}
	if !strings.Contains(h.m.footer(), "ctrl+o short error") {
		t.Errorf("footer after ctrl+o: %q", h.m.footer())
	}
}
