package ui

import tea "github.com/charmbracelet/bubbletea"

// recipients names the pages a message is for: a command's result goes to
// the page that asked for it, an engine run's events to the page that
// started the run (and its events also to the done page, which follows the
// add-ons' readiness). Prices, statuses and ticks stay with the root, which
// keeps them in the shared state the pages read; any other message goes to
// the active page.
func (m *Model) recipients(msg tea.Msg) []screenID {
	switch msg := msg.(type) {
	case VersionsMsg, ExtensionsMsg:
		return []screenID{scrImages}
	case OperatorAddressMsg:
		return []screenID{scrNetwork}
	case PlanMsg, PreflightMsg, SavedMsg:
		return []screenID{scrReview}
	case RunEventMsg:
		return append(m.runOwners(msg.RunID), scrDone)
	case RunDoneMsg:
		return m.runOwners(msg.RunID)
	case CatalogMsg, StatusMsg, TickMsg:
		return nil
	}
	return []screenID{m.active}
}

// runOwner is a page that starts engine runs (it embeds screenRun).
type runOwner interface {
	ownsRun(id int) bool
}

// runOwners lists the pages whose run is run id.
func (m *Model) runOwners(id int) []screenID {
	var out []screenID
	for sid, s := range m.screens {
		if o, ok := s.(runOwner); ok && o.ownsRun(id) && screenID(sid) != scrDone {
			out = append(out, screenID(sid))
		}
	}
	return out
}
