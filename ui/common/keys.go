package common

import (
	"github.com/charmbracelet/bubbles/key"
)

// KeyMap is every key binding of the wizard, with its help text. Screens
// pick the bindings that work on them; the footer shows exactly those.
type KeyMap struct {
	Quit, Help, Next, Prev               key.Binding
	Up, Down, Left, Right                key.Binding
	Tab, ShiftTab, Enter, Esc            key.Binding
	Toggle, Plus, Minus, Add, Edit       key.Binding
	Remove, Type, Yes, No, Save, Retry   key.Binding
	ScrollUp, ScrollDown, VolUp, VolDown key.Binding
	NextSchematic, Version               key.Binding
	// FullError shows a long error whole instead of its first lines
	// (ctrl+o: text inputs use ctrl+e for the line end).
	FullError key.Binding
}

// DefaultKeyMap returns the wizard's bindings.
func DefaultKeyMap() KeyMap {
	b := func(keys []string, k, desc string) key.Binding {
		return key.NewBinding(key.WithKeys(keys...), key.WithHelp(k, desc))
	}
	return KeyMap{
		Quit:          b([]string{"ctrl+c"}, "ctrl+c", "quit"),
		Help:          b([]string{"?"}, "?", "more keys"),
		Next:          b([]string{"ctrl+n", "pgdown"}, "ctrl+n", "next step"),
		Prev:          b([]string{"ctrl+p", "pgup"}, "ctrl+p", "previous step"),
		Up:            b([]string{"up", "k"}, "↑/k", "up"),
		Down:          b([]string{"down", "j"}, "↓/j", "down"),
		Left:          b([]string{"left"}, "←", "previous"),
		Right:         b([]string{"right"}, "→", "next"),
		Tab:           b([]string{"tab", "down"}, "tab/↓", "next field"),
		ShiftTab:      b([]string{"shift+tab", "up"}, "shift+tab/↑", "previous field"),
		Enter:         b([]string{"enter"}, "enter", "continue"),
		Esc:           b([]string{"esc"}, "esc", "cancel"),
		Toggle:        b([]string{" ", "x"}, "space", "toggle"),
		Plus:          b([]string{"+", "="}, "+", "one more server"),
		Minus:         b([]string{"-"}, "-", "one less server"),
		Add:           b([]string{"a"}, "a", "add pool"),
		Edit:          b([]string{"e"}, "e", "edit pool"),
		Remove:        b([]string{"d", "delete"}, "d", "remove pool"),
		Type:          b([]string{"t"}, "t", "server type"),
		Yes:           b([]string{"y"}, "y", "yes"),
		No:            b([]string{"n", "esc"}, "n/esc", "no"),
		Save:          b([]string{"s"}, "s", "save spec"),
		Retry:         b([]string{"r"}, "r", "retry / resume"),
		ScrollUp:      b([]string{"up", "k"}, "↑", "scroll up"),
		ScrollDown:    b([]string{"down", "j"}, "↓", "scroll down"),
		VolUp:         b([]string{"v"}, "v", "volume +10 GB"),
		VolDown:       b([]string{"V"}, "V", "volume -10 GB"),
		NextSchematic: b([]string{"tab"}, "tab", "next schematic"),
		Version:       b([]string{"v"}, "v", "version"),
		FullError:     b([]string{"ctrl+o"}, "ctrl+o", "whole error"),
	}
}
