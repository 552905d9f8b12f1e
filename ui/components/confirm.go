package components

import (
	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"

	"github.com/ohmytalos/ohmytalos/ui/common"
)

// Confirm asks a yes/no question before an action that spends money,
// deletes something or writes a file. The page that opens it remembers
// which action the answer is for.
type Confirm struct {
	question string
	open     bool
}

// Ask opens the box with a question.
func (b *Confirm) Ask(q string) { b.question, b.open = q, true }

// Open reports whether the box waits for an answer.
func (b Confirm) Open() bool { return b.open }

// Answer reads a key while the box is open: done is set once the operator
// answered, yes says how.
func (b *Confirm) Answer(msg tea.KeyMsg, km common.KeyMap) (done, yes bool) {
	switch {
	case key.Matches(msg, km.Yes):
		b.open = false
		return true, true
	case key.Matches(msg, km.No):
		b.open = false
		return true, false
	}
	return false, false
}

// Handle reads k when the box is open: it reports whether the box took the
// key and, on a yes, returns the command of onYes.
func (b *Confirm) Handle(k tea.KeyMsg, km common.KeyMap, onYes func() tea.Cmd) (tea.Cmd, bool) {
	if !b.open {
		return nil, false
	}
	if done, yes := b.Answer(k, km); done && yes {
		return onYes(), true
	}
	return nil, true
}

// View renders the open box.
func (b Confirm) View(st common.Styles, width int) string {
	if !b.open {
		return ""
	}
	w := min(width-2, 70)
	return st.Box.BorderForeground(st.Warn.GetForeground()).Width(w).Render(
		st.Warn.Render("confirm") + "\n" + b.question + "\n" + st.Subtle.Render("y: yes, go ahead   n/esc: no"))
}

// Help is the box's keys.
func (b Confirm) Help(km common.KeyMap) []key.Binding {
	return []key.Binding{km.Yes, km.No}
}
