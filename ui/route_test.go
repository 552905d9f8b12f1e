package ui

import (
	"fmt"
	"slices"
	"testing"

	tea "github.com/charmbracelet/bubbletea"
)

// recorder is a page that notes the messages it gets; run is its engine
// run's id.
type recorder struct {
	page
	got []string
	run int
}

func (r *recorder) enter() tea.Cmd      { return nil }
func (r *recorder) view() string        { return "" }
func (r *recorder) help() keyHelp       { return keyHelp{} }
func (r *recorder) capturing() bool     { return false }
func (r *recorder) ownsRun(id int) bool { return r.run == id }
func (r *recorder) update(msg tea.Msg) tea.Cmd {
	r.got = append(r.got, fmt.Sprintf("%T", msg))
	return nil
}
func (r *recorder) gotOnly(want ...string) bool { return slices.Equal(r.got, want) }
func (r *recorder) String() string              { return fmt.Sprint(r.got) }
func recorders(m *Model) (out [numScreens]*recorder) {
	for i := range m.screens {
		out[i] = &recorder{run: -1}
		m.screens[i] = out[i]
	}
	return out
}

// Each message reaches the page it is for, not all of them.
func TestMessagesGoToThePageThatAskedForThem(t *testing.T) {
	h, _ := newHarness(t, Options{Width: 100, Height: 30})
	h.Settle()
	rec := recorders(h.m)
	rec[scrBootstrap].run = 42
	h.m.active = scrPools
	for _, msg := range []tea.Msg{
		VersionsMsg{}, ExtensionsMsg{}, OperatorAddressMsg{}, PlanMsg{}, PreflightMsg{}, SavedMsg{},
		RunEventMsg{RunID: 42}, RunDoneMsg{RunID: 42}, StatusMsg{}, TickMsg{}, struct{}{},
	} {
		h.m.Update(msg)
	}
	want := map[screenID][]string{
		scrImages:    {"ui.VersionsMsg", "ui.ExtensionsMsg"},
		scrNetwork:   {"ui.OperatorAddressMsg"},
		scrReview:    {"ui.PlanMsg", "ui.PreflightMsg", "ui.SavedMsg"},
		scrBootstrap: {"ui.RunEventMsg", "ui.RunDoneMsg"},
		scrDone:      {"ui.RunEventMsg"},
		scrPools:     {"struct {}"},
	}
	for id, r := range rec {
		if !r.gotOnly(want[screenID(id)]...) {
			t.Errorf("page %s got %v, want %v", screenID(id), r, want[screenID(id)])
		}
	}
}
