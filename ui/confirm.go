package ui

import (
	"github.com/charmbracelet/bubbles/cursor"
	"github.com/charmbracelet/bubbles/key"
	"github.com/charmbracelet/bubbles/textinput"
	tea "github.com/charmbracelet/bubbletea"
)

// confirmBox asks a yes/no question before an action that spends money,
// deletes something or writes a file. The screen that opens it remembers
// which action the answer is for.
type confirmBox struct {
	question string
	open     bool
}

// ask opens the box with a question.
func (b *confirmBox) ask(q string) { b.question, b.open = q, true }

// answer reads a key while the box is open: done is set once the operator
// answered, yes says how.
func (b *confirmBox) answer(msg tea.KeyMsg, km KeyMap) (done, yes bool) {
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

// handle reads k when the box is open: it reports whether the box took the
// key and, on a yes, returns the command of onYes.
func (b *confirmBox) handle(k tea.KeyMsg, km KeyMap, onYes func() tea.Cmd) (tea.Cmd, bool) {
	if !b.open {
		return nil, false
	}
	if done, yes := b.answer(k, km); done && yes {
		return onYes(), true
	}
	return nil, true
}

// view renders the open box.
func (b confirmBox) view(st Styles, width int) string {
	if !b.open {
		return ""
	}
	w := min(width-2, 70)
	return st.Box.BorderForeground(st.Warn.GetForeground()).Width(w).Render(
		st.Warn.Render("confirm") + "\n" + b.question + "\n" + st.Subtle.Render("y: yes, go ahead   n/esc: no"))
}

// help is the box's keys.
func (b confirmBox) help(km KeyMap) keyHelp {
	return keyHelp{short: []key.Binding{km.Yes, km.No}}
}

// newInput returns a text input styled with st, with a steady cursor (no
// blink timer: renders stay deterministic).
func newInput(st Styles, value, placeholder string, width int) textinput.Model {
	ti := textinput.New()
	ti.Prompt = ""
	ti.SetValue(value)
	ti.Placeholder = placeholder
	ti.Width = width
	ti.CharLimit = 256
	ti.PromptStyle = st.Accent
	ti.TextStyle = st.App
	ti.PlaceholderStyle = st.Subtle
	ti.Cursor.Style = st.App.Reverse(true)
	ti.Cursor.TextStyle = st.App
	ti.Cursor.SetMode(cursor.CursorStatic)
	return ti
}
