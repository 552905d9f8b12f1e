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
		return m.overlay.Open(m.c.backend.Doctor(m.com.Styles.Renderer()), m.width, m.height)
	case doctorui.ClosedMsg:
		m.overlay.Close()
		return nil
	case tea.WindowSizeMsg:
		m.resize(msg.Width, msg.Height)
	}
	return m.overlay.Update(msg)
}
