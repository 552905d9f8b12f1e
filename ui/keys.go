package ui

import (
	"github.com/charmbracelet/bubbles/help"
	"github.com/charmbracelet/bubbles/key"
)

// keyHelp is a screen's bindings as a help.KeyMap: short help is one line,
// full help one column per group.
type keyHelp struct {
	short []key.Binding
	full  [][]key.Binding
	// global are the wizard-wide keys of the short help, kept apart so the
	// footer never truncates them away.
	global []key.Binding
}

var _ help.KeyMap = keyHelp{}

// ShortHelp implements help.KeyMap.
func (k keyHelp) ShortHelp() []key.Binding {
	return append(append([]key.Binding{}, k.short...), k.global...)
}

// FullHelp implements help.KeyMap.
func (k keyHelp) FullHelp() [][]key.Binding {
	if len(k.full) == 0 {
		return [][]key.Binding{k.short}
	}
	return k.full
}

// withGlobal appends the wizard-wide keys to a screen's help.
func (k keyHelp) withGlobal(km KeyMap) keyHelp {
	taken := map[string]bool{}
	for _, b := range k.short {
		for _, kk := range b.Keys() {
			taken[kk] = true
		}
	}
	free := func(bs ...key.Binding) []key.Binding {
		var out []key.Binding
		for _, b := range bs {
			if len(b.Keys()) > 0 && !taken[b.Keys()[0]] {
				out = append(out, b)
			}
		}
		return out
	}
	out := keyHelp{short: k.short, global: free(km.Help, km.Quit)}
	full := k.full
	if len(full) == 0 {
		full = [][]key.Binding{k.short}
	}
	out.full = append(append([][]key.Binding{}, full...), free(km.Next, km.Prev, km.FullError, km.Help, km.Quit))
	return out
}
