package doctorui

import (
	"github.com/charmbracelet/bubbles/help"
	"github.com/charmbracelet/bubbles/key"
)

// KeyMap is every key binding of the doctor screen, with its help text.
type KeyMap struct {
	// Up and Down move the selection (or scroll the details).
	Up, Down key.Binding
	// Open shows the selected check's evidence, explanation and fix.
	Open key.Binding
	// Back returns from the details to the list.
	Back key.Binding
	// RerunAll runs every check again (from the list).
	RerunAll key.Binding
	// RerunOne runs the shown check again (from its details).
	RerunOne key.Binding
	// Quit leaves the doctor.
	Quit key.Binding
}

// DefaultKeyMap returns the doctor screen's bindings.
func DefaultKeyMap() KeyMap {
	b := func(keys []string, k, desc string) key.Binding {
		return key.NewBinding(key.WithKeys(keys...), key.WithHelp(k, desc))
	}
	return KeyMap{
		Up:       b([]string{"up", "k"}, "↑/k", "up"),
		Down:     b([]string{"down", "j"}, "↓/j", "down"),
		Open:     b([]string{"enter"}, "enter", "details"),
		Back:     b([]string{"esc", "enter", "backspace"}, "esc", "back"),
		RerunAll: b([]string{"r"}, "r", "rerun all"),
		RerunOne: b([]string{"r"}, "r", "rerun this check"),
		Quit:     b([]string{"q", "ctrl+c"}, "q", "quit"),
	}
}

// shortHelp is a fixed list of bindings as a help.KeyMap.
type shortHelp []key.Binding

var _ help.KeyMap = shortHelp{}

// ShortHelp implements help.KeyMap.
func (s shortHelp) ShortHelp() []key.Binding { return s }

// FullHelp implements help.KeyMap.
func (s shortHelp) FullHelp() [][]key.Binding { return [][]key.Binding{s} }

// helpFor returns the keys that work right now: the rerun keys only when no
// run is in flight.
func (k KeyMap) helpFor(detail, running bool) shortHelp {
	var out shortHelp
	if detail {
		scroll := key.NewBinding(key.WithKeys("up", "down"), key.WithHelp("↑/↓", "scroll"))
		out = append(out, scroll, k.Back)
		if !running {
			out = append(out, k.RerunOne)
		}
	} else {
		out = append(out, k.Up, k.Down, k.Open)
		if !running {
			out = append(out, k.RerunAll)
		}
	}
	return append(out, k.Quit)
}
