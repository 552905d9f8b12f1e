package doctorui

import (
	"context"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/ohmytalos/ohmytalos/internal/doctor"
)

// ResultMsg is one check's result from run RunID.
type ResultMsg struct {
	// RunID tells runs apart: results of an earlier run are dropped.
	RunID int
	// Result is what the check found.
	Result doctor.Result
	ch     <-chan tea.Msg
}

// RunDoneMsg ends run RunID with all its results.
type RunDoneMsg struct {
	// RunID is the finished run.
	RunID int
	// Results are the run's results in registry order.
	Results []doctor.Result
}

// runStartedMsg hands the run's message channel to the model.
type runStartedMsg struct {
	runID int
	ch    <-chan tea.Msg
}

// startRunCmd runs the checks in a goroutine and returns at once with the
// channel the results stream through (the glow pattern: common.ReceiveCmd re-issues
// itself for every message). The goroutine gives up sending when ctx ends,
// so quitting never leaves it blocked.
func startRunCmd(ctx context.Context, run RunFunc, runID int, ids []string) tea.Cmd {
	return func() tea.Msg {
		ch := make(chan tea.Msg, 16)
		go func() {
			defer close(ch)
			send := func(m tea.Msg) {
				select {
				case ch <- m:
				case <-ctx.Done():
				}
			}
			results := run(ctx, ids, func(r doctor.Result) {
				send(ResultMsg{RunID: runID, Result: r, ch: ch})
			})
			send(RunDoneMsg{RunID: runID, Results: results})
		}()
		return runStartedMsg{runID: runID, ch: ch}
	}
}
