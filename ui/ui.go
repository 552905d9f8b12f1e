// Package ui is the ohmytalos wizard: a bubbletea application with a step
// sidebar, one screen per wizard step (welcome, secrets, images, network,
// pools, review, bootstrap, done), a status bar and a help footer.
//
// The UI never calls a cloud API itself: everything that talks to the
// outside goes through the Backend the caller wires (the engine, the price
// catalog, the Image Factory), and it runs in tea.Cmds or in the engine
// goroutine, never in Update or View.
//
// The shape is soft-serve's. The root model (model.go) owns the working
// spec and what derives from it (prices, findings, step statuses, the
// engine run): it changes them only in response to messages, such as a
// page's SpecEditMsg (specedit.go), and routes every message to the page
// it is for (route.go). Each screen is a page that keeps its own state and
// reads the root's through a read-only view (shared.go; a go/ast test
// fails on any page write). Package ui/common holds the value every page
// receives (size, styles, keys); ui/components the pieces pages draw (cost
// panel, subnet map, progress list, confirm box, overlay).
//
// The package is the wizard of the ohmytalos command, not a public API:
// cmd/ohmytalos is its only caller.
package ui

import (
	"context"
	"errors"
	"fmt"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"

	"github.com/ohmytalos/ohmytalos/internal/engine"
	"github.com/ohmytalos/ohmytalos/internal/factory"
	"github.com/ohmytalos/ohmytalos/internal/netplan"
	"github.com/ohmytalos/ohmytalos/internal/pricing"
	"github.com/ohmytalos/ohmytalos/internal/spec"
	"github.com/ohmytalos/ohmytalos/steps"
	"github.com/ohmytalos/ohmytalos/ui/theme"
)

// Backend is everything the UI needs from the outside. The caller wires
// real implementations (Hetzner, or the sandbox).
type Backend struct {
	// Engine runs and plans the provisioning steps.
	Engine *engine.Engine
	// Env is the engine's environment. Env.Spec is the spec being edited:
	// the UI edits a copy and sets Env.Spec to a snapshot of it before it
	// runs or plans steps.
	Env *engine.Env
	// SpecPath is where the review screen writes the spec file.
	SpecPath string
	// Sandbox labels everything as sandbox: nothing is created on Hetzner.
	Sandbox bool
	// SandboxVault is, in the sandbox, the bw reference to the sandbox's
	// Vaultwarden (bw serve) item holding the token: the secrets screen
	// offers it first, so the vault lookup can be tried without an account.
	SandboxVault *spec.SecretRef
	// LogPath is the log file, shown in the full help.
	LogPath string
	// Catalog loads the price catalog; it is called in a tea.Cmd.
	Catalog func(ctx context.Context) (*pricing.Catalog, error)
	// Extensions lists the official extensions of a Talos version; it is
	// called in a tea.Cmd.
	Extensions func(ctx context.Context, talosVersion string) ([]factory.Extension, error)
	// Versions lists the Talos versions the Image Factory can build; it is
	// called in a tea.Cmd when the images screen opens. The screen's
	// version key picks among the stable releases; nil hides the picker.
	Versions func(ctx context.Context) ([]string, error)
	// Adapt turns a spec into the netplan layout and the pricing usage;
	// DefaultAdapt is used when it is nil.
	Adapt func(*spec.Spec) (netplan.Layout, pricing.Usage)
	// OperatorAddress detects the operator's public address as firewall
	// source ranges (and names the echo services asked); it is called in a
	// tea.Cmd when the network screen opens with an empty firewall.allow.
	// nil leaves firewall.allow empty (detected at plan time).
	OperatorAddress func(ctx context.Context, s *spec.Spec) (sources []string, from string, err error)
	// Preflight checks the spec against the live API before anything is
	// created (steps.Preflight); it is called in a tea.Cmd when the review
	// screen opens on a changed spec. nil skips the pre-flight.
	Preflight func(ctx context.Context, s *spec.Spec) (steps.Findings, error)
	// Redact scrubs secret values from engine events and errors; optional.
	Redact func(string) string
	// Doctor builds the doctor screen for the done screen's "d" key with
	// the wizard's renderer; nil hides the key. It must only construct:
	// checks run in commands.
	Doctor func(r *lipgloss.Renderer) tea.Model
	// Build reports a build running beside the wizard (the sandbox's
	// Kubernetes control plane on first use), shown above the keys until
	// it is over; it is called in a tea.Cmd, once a second. nil: none.
	Build func() BuildStatus
}

// Options tune the UI.
type Options struct {
	// Width and Height are the initial size (the terminal's size replaces
	// them as soon as it is known).
	Width, Height int
	// NoColor renders without colours.
	NoColor bool
	// Resume opens at the first unfinished step; it also says that
	// Backend.Env.Spec was read from Backend.SpecPath (the file is current).
	Resume bool
}

// ErrNoTTY is returned by Run when stdin or stdout is not a terminal.
var ErrNoTTY = errors.New("init needs a terminal; use plan/apply in scripts")

// New returns the wizard's root model.
func New(b Backend, o Options) tea.Model {
	return newModel(context.Background(), b, o)
}

// Run runs the wizard full screen until the operator quits. It refuses to
// start when stdin or stdout is not a terminal (ErrNoTTY). Cancelling ctx
// stops the wizard and any running engine step (the state is checkpointed).
func Run(ctx context.Context, b Backend, o Options) error {
	if !theme.OnTerminal() {
		return ErrNoTTY
	}
	if b.Engine == nil || b.Env == nil || b.Env.Spec == nil {
		return errors.New("the wizard needs an engine and a spec: this is a bug in the caller, please report it")
	}
	// Settle the colour profile and background first, with a bounded
	// wait: lipgloss would otherwise query the terminal lazily from the
	// first style rendered (the model lays out its footer as it is built),
	// up to termenv's 5 s per query when the terminal never answers.
	m := newModelOn(ctx, b, o, theme.ForStdout(nil, o.NoColor))
	p := tea.NewProgram(m, tea.WithAltScreen(), tea.WithContext(ctx))
	final, err := p.Run()
	if fm, ok := final.(*Model); ok {
		fm.stopRuns()
	}
	if errors.Is(err, tea.ErrProgramKilled) && ctx.Err() != nil {
		return fmt.Errorf("the wizard was stopped (%w): the state is saved; run init again to resume", ctx.Err())
	}
	if err != nil {
		return fmt.Errorf("the wizard failed: %w", err)
	}
	if fm, ok := final.(*Model); ok && fm.runErr != nil {
		return fm.runErr
	}
	return nil
}
