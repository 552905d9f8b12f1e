package engine

import (
	"fmt"

	"github.com/ohmytalos/ohmytalos/internal/state"
)

// StepName identifies a step: --only and --from take it, events and plans
// carry it, and dependencies name it.
type StepName string

// Status is a step's status as the engine reports it.
type Status string

// Step statuses. Stale is a step done with another spec: apply runs it again.
const (
	StatusPending Status = state.StatusPending
	StatusRunning Status = state.StatusRunning
	StatusDone    Status = state.StatusDone
	StatusFailed  Status = state.StatusFailed
	StatusStale   Status = "stale"
)

// Action is what a plan item or resource event does to a resource.
type Action string

// Resource actions, in KindResource events and plans. Replace is a change
// Hetzner cannot make in place: apply reports it and leaves the resource.
const (
	ActionCreate  Action = "create"
	ActionReuse   Action = "reuse"
	ActionUpdate  Action = "update"
	ActionReplace Action = "replace"
	ActionDelete  Action = "delete"
	ActionRender  Action = "render"
)

// Change is one field of a resource that differs from the spec: plan
// shows it, apply changes it in place (or reports it when it cannot).
type Change struct {
	Field string `json:"field"`
	Old   string `json:"old"`
	New   string `json:"new"`
	// Replace marks a change Hetzner cannot make in place.
	Replace bool `json:"replace,omitempty"`
}

// String renders "field: old -> new".
func (c Change) String() string {
	s := fmt.Sprintf("%s: %s -> %s", c.Field, orNone(c.Old), orNone(c.New))
	if c.Replace {
		s += " (needs replacing: Hetzner cannot change it in place)"
	}
	return s
}

func orNone(s string) string {
	if s == "" {
		return "(none)"
	}
	return s
}
