package ui

import (
	"context"
	"time"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/ohmytalos/ohmytalos/internal/engine"
	"github.com/ohmytalos/ohmytalos/internal/netplan"
	"github.com/ohmytalos/ohmytalos/internal/pricing"
	"github.com/ohmytalos/ohmytalos/internal/spec"
	"github.com/ohmytalos/ohmytalos/ui/components"
)

// shared is the root model's domain state that the pages read: the
// backend, a read-only copy of the working spec and what was loaded or
// computed from it. The root owns it; pages hold a pointer to read it and
// change the spec only through SpecEditMsg. The size, styles and keys are
// not here: each page holds its own copy (page).
type shared struct {
	ctx     context.Context
	backend Backend
	opts    Options
	// fullErrors shows long errors whole (the FullError key toggles it).
	fullErrors bool

	// spec is a read-only view of the root's working spec: a copy the root
	// replaces after every edit, so a page that wrote it would change
	// nothing. Pages change the spec with editSpec (a SpecEditMsg).
	spec *spec.Spec
	// send hands an edit to the root's Update at once (synchronously, so a
	// page reads its own edit back in the same update).
	send func(SpecEditMsg)
	// start asks the root to start an engine run against a snapshot of the
	// working spec; it returns the run's id and the command that feeds its
	// events, or a nil command when another run is in flight.
	start func(engine.Options) (runID int, cmd tea.Cmd)

	catalog     *pricing.Catalog
	catalogErr  error
	estimate    *pricing.Estimate
	estimateErr error
	findings    []netplan.Finding
	// applied is the cost of the spec the last finished apply used (nil
	// for a new cluster): the review shows the change against it.
	applied *pricing.Estimate

	// status is the engine's view of each step, by step name.
	status map[engine.StepName]engine.StepStatus
	// savedHash is the hash of the spec the review screen last wrote.
	savedHash string
	// now is the latest time the UI heard of (ticks, event times): views
	// compute elapsed times from it instead of reading the clock.
	now time.Time
}

// editSpec asks the root to apply edit to the working spec; when it
// returns, c.spec is the root's new view.
func (c *shared) editSpec(edit func(*spec.Spec)) { c.send(SpecEditMsg{Edit: edit}) }

// adapt turns the working spec into a netplan layout and a pricing usage.
func (c *shared) adapt() (netplan.Layout, pricing.Usage) {
	if c.backend.Adapt != nil {
		return c.backend.Adapt(c.spec)
	}
	return DefaultAdapt(c.spec)
}

// specChanged recomputes everything derived from the spec: the netplan
// findings and, when prices are loaded, the cost estimate. Pure
// computation: it is called from Update on every keystroke.
func (c *shared) specChanged() {
	layout, usage := c.adapt()
	c.findings = netplan.Validate(layout)
	if c.catalog == nil {
		return
	}
	e, err := c.catalog.Estimate(usage)
	if err != nil {
		c.estimate, c.estimateErr = nil, err
		return
	}
	c.estimate, c.estimateErr = &e, nil
	c.applied = c.appliedEstimate()
}

// appliedEstimate prices the spec the last finished apply recorded in the
// state (already in memory: no I/O), or nil when there is none.
func (c *shared) appliedEstimate() *pricing.Estimate {
	env := c.backend.Env
	if env == nil || env.State == nil {
		return nil
	}
	var prev string
	if found, err := env.State.GetData(engine.DataAppliedSpec, &prev); !found || err != nil {
		return nil
	}
	old, err := spec.Parse([]byte(prev))
	if err != nil {
		return nil
	}
	adapt := DefaultAdapt
	if c.backend.Adapt != nil {
		adapt = c.backend.Adapt
	}
	_, usage := adapt(old)
	e, err := c.catalog.Estimate(usage)
	if err != nil {
		return nil
	}
	return &e
}

// findingsFor returns the findings of one spec field.
func (c *shared) findingsFor(field string) []netplan.Finding {
	var out []netplan.Finding
	for _, f := range c.findings {
		if f.Field == field {
			out = append(out, f)
		}
	}
	return out
}

// networkErrors counts the findings that block the plan.
func (c *shared) networkErrors() int {
	n := 0
	for _, f := range c.findings {
		if f.Severity == netplan.SeverityError {
			n++
		}
	}
	return n
}

// stepStatus returns the engine status of a step (pending when unknown).
func (c *shared) stepStatus(name engine.StepName) engine.Status {
	if st, ok := c.status[name]; ok && st.Status != "" {
		return st.Status
	}
	return engine.StatusPending
}

// cloneSpec deep-copies a spec through its YAML form, so a running engine
// never sees the operator's later edits.
func cloneSpec(s *spec.Spec) *spec.Spec {
	b, err := s.Marshal()
	if err != nil {
		cp := *s
		return &cp
	}
	out, err := spec.Decode(b)
	if err != nil {
		cp := *s
		return &cp
	}
	return out
}

// isSaved reports whether the spec file holds the working spec as it is now.
func (c *shared) isSaved() bool { return c.savedHash != "" && c.savedHash == c.spec.Hash() }

// deployStatus summarises the engine's deploy steps: done when all are
// done, failed when one failed, resumable when some ran, else pending.
func (c *shared) deployStatus() string {
	done, failed, started := 0, false, false
	for _, s := range deploySteps() {
		switch c.stepStatus(s) {
		case engine.StatusDone:
			done++
			started = true
		case engine.StatusFailed:
			failed = true
		case engine.StatusRunning, engine.StatusStale:
			started = true
		}
	}
	switch {
	case failed:
		return statusFailed
	case done == len(deploySteps()):
		return statusDone
	case started:
		return statusResumable
	}
	return statusPending
}

// cost is what the cost panel shows of the root's state.
func (c *shared) cost() components.Cost {
	return components.Cost{Sandbox: c.backend.Sandbox, Catalog: c.catalog, CatalogErr: c.catalogErr,
		Estimate: c.estimate, EstimateErr: c.estimateErr, Applied: c.applied}
}
