package ui

import (
	"testing"

	tea "github.com/charmbracelet/bubbletea"
)

// own is the page value a screen embeds.
func (p *page) own() *page { return p }

// commonOf is a page's own copy of the common value.
func commonOf(t *testing.T, s screen) *page {
	t.Helper()
	p, ok := s.(interface{ own() *page })
	if !ok {
		t.Fatalf("%T embeds no page", s)
	}
	return p.own()
}

// Every page holds a copy of the root's size, styles and keys, and gets a
// new one on a resize; a page that changes its copy changes no other.
func TestEveryPageHoldsItsOwnCommon(t *testing.T) {
	m := newModel(t.Context(), Backend{}, Options{Width: 100, Height: 30})
	m.Update(tea.WindowSizeMsg{Width: 140, Height: 40})
	for id, s := range m.screens {
		p := commonOf(t, s)
		if p.Width != m.com.Width || p.Height != m.com.Height || p.Width == 0 {
			t.Fatalf("%v: size %dx%d, want the root's %dx%d", screenID(id), p.Width, p.Height, m.com.Width, m.com.Height)
		}
		if p.Keys.Enter.Help().Key != m.com.Keys.Enter.Help().Key {
			t.Fatalf("%v: enter key %q, want the root's %q", screenID(id), p.Keys.Enter.Help().Key, m.com.Keys.Enter.Help().Key)
		}
	}
	commonOf(t, m.screens[scrWelcome]).Width = 7
	if w := commonOf(t, m.screens[scrNetwork]).Width; w == 7 || m.com.Width == 7 {
		t.Fatalf("a page's width change reached another page (%d) or the root (%d)", w, m.com.Width)
	}
}
