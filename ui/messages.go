package ui

import (
	"time"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/ohmytalos/ohmytalos/internal/engine"
	"github.com/ohmytalos/ohmytalos/internal/factory"
	"github.com/ohmytalos/ohmytalos/internal/pricing"
	"github.com/ohmytalos/ohmytalos/internal/spec"
	"github.com/ohmytalos/ohmytalos/steps"
)

// CatalogMsg carries the price catalog loaded by Backend.Catalog.
type CatalogMsg struct {
	Catalog *pricing.Catalog
	Err     error
}

// ExtensionsMsg carries the official extensions of a Talos version.
type ExtensionsMsg struct {
	Version    string
	Extensions []factory.Extension
	Err        error
}

// VersionsMsg carries the Talos versions the Image Factory can build, as
// Backend.Versions listed them (unfiltered, in the factory's order).
type VersionsMsg struct {
	Versions []string
	Err      error
}

// StatusMsg carries the engine's step statuses, read from the state.
type StatusMsg struct {
	Steps []engine.StepStatus
}

// PlanMsg carries the plans of every step, for the review screen.
type PlanMsg struct {
	Plans []engine.Plan
	Err   error
}

// PreflightMsg carries the pre-flight findings of the spec whose hash is
// Hash, for the review screen.
type PreflightMsg struct {
	Hash     string
	Findings steps.Findings
	Err      error
}

// SavedMsg reports that the spec file was written (or why not).
type SavedMsg struct {
	Path string
	// Hash is the hash of the spec written (set on success).
	Hash string
	Err  error
}

// RunEventMsg is one engine event of run RunID.
type RunEventMsg struct {
	RunID int
	Event engine.Event
	ch    <-chan tea.Msg
}

// RunDoneMsg ends run RunID; Err is its error.
type RunDoneMsg struct {
	RunID int
	Err   error
}

// TickMsg drives elapsed-time displays while a run is in flight.
type TickMsg time.Time

// SpecEditMsg asks the root to change the working spec: pages never write
// it. The root runs Edit on its spec, recomputes what derives from it
// (findings, estimate) and hands the pages a fresh read-only view.
type SpecEditMsg struct {
	Edit func(*spec.Spec)
}

// navMsg asks the root to show another screen.
type navMsg struct{ to screenID }

// navCmd returns the command that moves to screen to.
func navCmd(to screenID) tea.Cmd { return func() tea.Msg { return navMsg{to} } }
