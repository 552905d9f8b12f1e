package common

import tea "github.com/charmbracelet/bubbletea"

// ReceiveCmd reads the next message of a run's channel; nil once the
// channel is closed and the run is over. The model re-issues it after each
// message, so a run streams its messages one at a time (glow's pattern).
func ReceiveCmd(ch <-chan tea.Msg) tea.Cmd {
	return func() tea.Msg {
		msg, ok := <-ch
		if !ok {
			return nil
		}
		return msg
	}
}
