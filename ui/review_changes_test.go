package ui

import (
	"testing"

	"github.com/ohmytalos/ohmytalos/internal/engine"
	"github.com/ohmytalos/ohmytalos/steps"
)

// TestReviewShowsUpdatesWithOldAndNewValues: a plan item apply will change
// is shown as an update (or replace) with each change's old and new value.
func TestReviewShowsUpdatesWithOldAndNewValues(t *testing.T) {
	h, _ := newHarness(t, Options{Width: 100, Height: 40})
	h.open(scrReview)
	h.Settle()
	h.Send(PlanMsg{Plans: []engine.Plan{{Step: steps.StepPools, Items: []engine.PlanItem{
		{Action: engine.ActionUpdate, Kind: "firewall", Name: "demo", Changes: []engine.Change{
			{Field: "rules", Old: "in tcp 6443 from 0.0.0.0/0", New: "in tcp 6443 from 203.0.113.7/32"}}},
		{Action: engine.ActionReplace, Kind: "server", Name: "demo-worker-1", Changes: []engine.Change{
			{Field: "server type", Old: "cpx32", New: "cpx42", Replace: true}}},
	}}}})
	h.Settle()
	mustContain(t, h.m.View(), "pools      0 to create, 0 to reuse, 1 to update",
		"~ firewall demo", "rules: in tcp 6443 from 0.0.0.0/0 -> in tcp 6443 from 203.0.113.7/32",
		"! server demo-worker-1", "server type: cpx32 -> cpx42 (needs replacing")
}
