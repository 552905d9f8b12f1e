package ui

import (
	"slices"
	"strings"

	"github.com/ohmytalos/ohmytalos/internal/engine"
	"github.com/ohmytalos/ohmytalos/steps"
)

// readiness folds the add-ons step's events into what the done screen
// says: the add-ons applied, the wait's last summary, what each node and
// workload last reported, and how the step ended. Nothing here is
// computed: every line is one the step emitted.
type readiness struct {
	state   string // "", running, done, failed, skipped
	summary string // "5/5 nodes Ready, 5 with a provider ID, 5/5 add-on workloads ready"
	addons  []string
	rows    []readinessRow
	err     string
}

// readinessRow is one node's or workload's latest report.
type readinessRow struct {
	resource, status string
	ok               bool
}

// add folds in one event; a new run of the step starts over.
func (r *readiness) add(ev engine.Event) {
	if ev.Step != steps.StepAddons {
		return
	}
	switch ev.Kind {
	case engine.KindStarted:
		*r = readiness{state: runRunning}
	case engine.KindDone:
		r.state, r.err = "done", ""
	case engine.KindSkipped:
		r.state = "skipped"
	case engine.KindFailed:
		r.state, r.err = "failed", ev.Error
	case engine.KindResource:
		if name, ok := strings.CutPrefix(ev.Resource, "addon/"); ok && !slices.Contains(r.addons, name) {
			r.addons = append(r.addons, name)
		}
	case engine.KindProgress:
		if ev.Resource == "nodes" {
			r.summary = ev.Message
			return
		}
		r.set(readinessRow{resource: ev.Resource, status: ev.Message, ok: ev.Fraction >= 1})
	}
}

func (r *readiness) set(row readinessRow) {
	for i := range r.rows {
		if r.rows[i].resource == row.resource {
			r.rows[i] = row
			return
		}
	}
	r.rows = append(r.rows, row)
}

// missing is every row that does not have what it waits for yet.
func (r *readiness) missing() []readinessRow {
	var out []readinessRow
	for _, row := range r.rows {
		if !row.ok {
			out = append(out, row)
		}
	}
	return out
}
