package ui

import (
	"testing"

	"github.com/ohmytalos/ohmytalos/internal/engine"
	"github.com/ohmytalos/ohmytalos/steps"
)

// TestReviewShowsScaleDownDeletes: the servers a lowered count removes are
// listed as deletes, with what happens to them, before anything runs.
func TestReviewShowsScaleDownDeletes(t *testing.T) {
	h, _ := newHarness(t, Options{Width: 120, Height: 40})
	h.open(scrReview)
	h.Settle()
	h.Send(PlanMsg{Plans: []engine.Plan{{Step: steps.StepScaleDown, Items: []engine.PlanItem{
		{Action: engine.ActionDelete, Kind: "server", Name: "demo-worker-2", Detail: "cordon, drain, delete the Kubernetes node and the server"},
		{Action: engine.ActionDelete, Kind: "volume", Name: "demo-worker-2-data", Detail: "its data is lost"},
	}}}})
	h.Settle()
	mustContain(t, h.m.View(), "scale-down 0 to create, 0 to reuse, 0 to update, 2 to delete",
		"- server demo-worker-2 cordon, drain", "- volume demo-worker-2-data its data is lost")
}
