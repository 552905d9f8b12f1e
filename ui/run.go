package ui

import (
	tea "github.com/charmbracelet/bubbletea"

	"github.com/ohmytalos/ohmytalos/internal/engine"
	"github.com/ohmytalos/ohmytalos/ui/common"
)

// Result states of a screen's engine run.
const (
	runRunning = "running"
	runOK      = "ok"
	runFailed  = "failed"
)

// screenRun is the engine run a screen starts (secrets, images, bootstrap)
// and the result it shows. Screens embed it, so runID, result and err read
// as the screen's own fields.
type screenRun struct {
	runID  int
	result string // "", "running", "ok", "failed"
	err    string
}

// startEngine starts an engine run with opts for the screen and returns
// the command feeding its events; when another run is in flight it records
// why nothing started and returns nil.
func (r *screenRun) startEngine(c *shared, opts engine.Options) tea.Cmd {
	id, cmd := c.start(opts)
	if cmd == nil {
		r.err = "another step is still running; wait for it to finish"
		return nil
	}
	r.runID, r.result, r.err = id, runRunning, ""
	return cmd
}

// ownsRun reports whether run id is the screen's run (the root routes the
// run's messages by it).
func (r *screenRun) ownsRun(id int) bool { return r.runID == id }

// runEvent returns the event msg carries when msg is an event of the
// screen's run.
func (r *screenRun) runEvent(msg tea.Msg) (engine.Event, bool) {
	ev, ok := msg.(RunEventMsg)
	if !ok || ev.RunID != r.runID {
		return engine.Event{}, false
	}
	return ev.Event, true
}

// runDone records the result when msg says the screen's run ended, and
// reports whether it did.
func (r *screenRun) runDone(msg tea.Msg) bool {
	done, ok := msg.(RunDoneMsg)
	if !ok || done.RunID != r.runID {
		return false
	}
	r.result, r.err = runOK, ""
	if done.Err != nil {
		r.result, r.err = runFailed, done.Err.Error()
	}
	return true
}

// enterKey is what enter does while the run is in flight (nothing) or
// after it succeeded (go on to next); handled is false otherwise, when the
// screen starts its run or asks to.
func (r *screenRun) enterKey(next screenID) (cmd tea.Cmd, handled bool) {
	switch r.result {
	case runOK:
		return navCmd(next), true
	case runRunning:
		return nil, true
	}
	return nil, false
}

// failureView is the failed run's error, wrapped to width (its first
// lines unless the whole error was asked for).
func (r *screenRun) failureView(com common.Common, full bool, width int) string {
	return errorText(com, full, com.Styles.Bad, "✗ "+r.err, width) + "\n"
}

// noticeView is the line for an error that is not the run's failure (such
// as a run that could not start), or "" when there is none.
func (r *screenRun) noticeView(com common.Common, full bool) string {
	if r.err == "" || r.result == runFailed {
		return ""
	}
	return errorText(com, full, com.Styles.Warn, r.err, com.Width) + "\n"
}
