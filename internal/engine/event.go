package engine

import "time"

// Kind is the type of an event.
type Kind string

// Event kinds.
const (
	KindStarted  Kind = "started"
	KindProgress Kind = "progress"
	KindLog      Kind = "log"
	KindResource Kind = "resource"
	KindWarning  Kind = "warning"
	KindDone     Kind = "done"
	KindFailed   Kind = "failed"
	KindSkipped  Kind = "skipped"
)

// Event is one thing a step reports.
type Event struct {
	Time     time.Time     `json:"time"`
	Step     StepName      `json:"step"`
	Kind     Kind          `json:"kind"`
	Message  string        `json:"message,omitempty"`
	Resource string        `json:"resource,omitempty"` // "server/demo-cp-1"
	Action   Action        `json:"action,omitempty"`   // create, reuse, update, delete
	ID       int64         `json:"id,omitempty"`
	Fraction float64       `json:"fraction,omitempty"` // 0..1 for progress
	Bytes    int64         `json:"bytes,omitempty"`
	Total    int64         `json:"total,omitempty"`
	Error    string        `json:"error,omitempty"`
	Elapsed  time.Duration `json:"elapsed,omitempty"`
	// RateLimit is Hetzner's API budget as last reported (RateLimit-*
	// headers), on events that carry it.
	RateLimit *RateLimit `json:"rateLimit,omitempty"`
}

// RateLimit is how many API requests are left of the hourly limit.
type RateLimit struct {
	Remaining int `json:"remaining"`
	Limit     int `json:"limit"`
}

// Emit sends an event.
type Emit func(Event)

// Plan is what a step would do.
type Plan struct {
	Step  StepName   `json:"step"`
	Items []PlanItem `json:"items"`
	Notes []string   `json:"notes,omitempty"`
}

// PlanItem is one resource a step would create, reuse, update or delete.
type PlanItem struct {
	Action Action `json:"action"`
	Kind   string `json:"kind"`
	Name   string `json:"name"`
	Detail string `json:"detail,omitempty"`
	// Changes are the differences an update (or replace) resolves, with
	// the old and new values.
	Changes []Change `json:"changes,omitempty"`
}

// Count returns how many items have the action.
func (p Plan) Count(action Action) int {
	n := 0
	for _, it := range p.Items {
		if it.Action == action {
			n++
		}
	}
	return n
}
