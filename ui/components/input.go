package components

import (
	"github.com/charmbracelet/bubbles/cursor"
	"github.com/charmbracelet/bubbles/textinput"

	"github.com/ohmytalos/ohmytalos/ui/common"
)

// NewInput returns a text input styled with st, with a steady cursor (no
// blink timer: renders stay deterministic).
func NewInput(st common.Styles, value, placeholder string, width int) textinput.Model {
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
