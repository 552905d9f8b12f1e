package components

import tea "github.com/charmbracelet/bubbletea"

// Overlay hosts a full-screen sub-program (the doctor) over the wizard:
// while it is open it gets every message and draws the whole screen. The
// root decides when it opens and closes.
type Overlay struct {
	model tea.Model
}

// Open shows m at w x h and returns its first commands.
func (o *Overlay) Open(m tea.Model, w, h int) tea.Cmd {
	o.model = m
	init := m.Init()
	var size tea.Cmd
	o.model, size = o.model.Update(tea.WindowSizeMsg{Width: w, Height: h})
	return tea.Batch(init, size)
}

// Close hides the sub-program.
func (o *Overlay) Close() { o.model = nil }

// Active reports whether a sub-program is shown.
func (o Overlay) Active() bool { return o.model != nil }

// Update hands msg to the sub-program.
func (o *Overlay) Update(msg tea.Msg) tea.Cmd {
	if o.model == nil {
		return nil
	}
	var cmd tea.Cmd
	o.model, cmd = o.model.Update(msg)
	return cmd
}

// View draws the sub-program.
func (o Overlay) View() string {
	if o.model == nil {
		return ""
	}
	return o.model.View()
}
