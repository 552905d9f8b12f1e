package ui

import (
	tea "github.com/charmbracelet/bubbletea"

	"github.com/ohmytalos/ohmytalos/ui/doctorui"
)

// openDoctorMsg asks the root to show the doctor screen.
type openDoctorMsg struct{}

func isOpenDoctor(msg tea.Msg) bool {
	_, ok := msg.(openDoctorMsg)
	return ok
}

// updateOverlay opens, feeds and closes the full-screen doctor.
func (m *Model) updateOverlay(msg tea.Msg) tea.Cmd {
	switch msg := msg.(type) {
	case openDoctorMsg:
		if m.c.backend.Doctor == nil {
			return nil
		}
		m.overlay = m.c.backend.Doctor(m.c.Styles.Renderer())
		init := m.overlay.Init()
		var size tea.Cmd
		m.overlay, size = m.overlay.Update(tea.WindowSizeMsg{Width: m.width, Height: m.height})
		return tea.Batch(init, size)
	case doctorui.ClosedMsg:
		m.overlay = nil
		return nil
	case tea.WindowSizeMsg:
		m.resize(msg.Width, msg.Height)
	}
	var cmd tea.Cmd
	m.overlay, cmd = m.overlay.Update(msg)
	return cmd
}
