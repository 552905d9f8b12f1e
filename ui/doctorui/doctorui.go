// Package doctorui is the doctor's full-screen view: every check in a list
// with a live spinner while it runs and a status badge when it is done, the
// evidence, explanation and fix of the selected check on Enter, and reruns
// on a key.
//
// The screen never runs a check itself: the caller passes the function that
// does (doctor.Run bound to an environment), and the screen calls it in a
// command goroutine, receiving each result as a message.
package doctorui

import (
	"context"
	"errors"
	"fmt"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"

	"github.com/ohmytalos/ohmytalos/internal/doctor"
	"github.com/ohmytalos/ohmytalos/ui/theme"
)

// RunFunc runs the checks named by ids (all of them when ids is empty),
// calls report with each result as soon as it is known, and returns all the
// results. doctor.Run bound to an environment is one; secret values must be
// redacted by it, since the screen shows results as they come.
type RunFunc func(ctx context.Context, ids []string, report func(doctor.Result)) []doctor.Result

// Options tune the doctor screen.
type Options struct {
	// Width and Height are the initial size; the terminal's size replaces
	// them as soon as it is known.
	Width, Height int
	// NoColor renders without colours (bold and reverse stay).
	NoColor bool
	// Sandbox shows the SANDBOX badge: the checked cluster is the sandbox's.
	Sandbox bool
	// Notes are shown under the list, e.g. why a whole source is missing
	// ("Kubernetes checks skip: no kubeconfig yet").
	Notes []string
	// Only limits the screen to these check IDs (the command line's
	// --check): only they are listed, run on start and rerun with r.
	// Empty means every check.
	Only []string
	// Embedded makes q go back to the hosting program (a ClosedMsg)
	// instead of quitting it.
	Embedded bool
	// Renderer draws the styles; nil makes one on stdout. Pass one whose
	// colour profile and background were already queried: a lazy query
	// from View would read the terminal bubbletea is reading.
	Renderer *lipgloss.Renderer
}

// ClosedMsg is sent when an embedded doctor screen is closed.
type ClosedMsg struct{}

// ErrNoTTY is returned by Run when stdin or stdout is not a terminal.
var ErrNoTTY = errors.New("the doctor's full-screen view needs a terminal; in scripts use the plain report (output not a terminal) or --json")

// New returns the doctor screen. It starts running every check as soon as
// the program initialises it; run is called only from command goroutines.
func New(run func(ctx context.Context, ids []string, report func(doctor.Result)) []doctor.Result, checks []doctor.Check, o Options) tea.Model {
	return newModel(context.Background(), run, checks, o, o.Renderer)
}

// Run shows the doctor screen full screen until the operator quits. The
// doctor's exit code needs the results: a caller that wants them runs New's
// model in its own program and reads (*Model).Results.
// Cancelling ctx stops the screen and any running check. It refuses to start
// when stdin or stdout is not a terminal (ErrNoTTY).
func Run(ctx context.Context, run func(ctx context.Context, ids []string, report func(doctor.Result)) []doctor.Result, checks []doctor.Check, o Options) error {
	if !theme.OnTerminal() {
		return ErrNoTTY
	}
	if run == nil {
		return errors.New("the doctor screen needs a function that runs the checks: this is a bug in the caller, please report it")
	}
	m := newModel(ctx, run, checks, o, theme.ForStdout(o.Renderer, o.NoColor))
	p := tea.NewProgram(m, tea.WithAltScreen(), tea.WithContext(ctx))
	_, err := p.Run()
	m.stop()
	if err != nil && !errors.Is(err, tea.ErrProgramKilled) && !errors.Is(err, context.Canceled) {
		return fmt.Errorf("doctor screen: %w", err)
	}
	return nil
}
