package ui

import (
	"testing"

	"github.com/ohmytalos/ohmytalos/internal/engine"
	"github.com/ohmytalos/ohmytalos/steps"
)

// TestReviewShowsPlanItems: a plan item apply will change is shown as an
// update (or replace) with each change's old and new value; the servers a
// lowered count removes are listed as deletes, with what happens to them,
// before anything runs.
func TestReviewShowsPlanItems(t *testing.T) {
	cases := []struct {
		name  string
		width int
		plan  engine.Plan
		want  []string
	}{
		{"updates with old and new values", 100, engine.Plan{Step: steps.StepPools, Items: []engine.PlanItem{
			{Action: engine.ActionUpdate, Kind: "firewall", Name: "demo", Changes: []engine.Change{
				{Field: "rules", Old: "in tcp 6443 from 0.0.0.0/0", New: "in tcp 6443 from 203.0.113.7/32"}}},
			{Action: engine.ActionReplace, Kind: "server", Name: "demo-worker-1", Changes: []engine.Change{
				{Field: "server type", Old: "cpx32", New: "cpx42", Replace: true}}},
		}}, []string{"pools      0 to create, 0 to reuse, 1 to update",
			"~ firewall demo", "rules: in tcp 6443 from 0.0.0.0/0 -> in tcp 6443 from 203.0.113.7/32",
			"! server demo-worker-1", "server type: cpx32 -> cpx42 (needs replacing"}},
		{"scale-down deletes", 120, engine.Plan{Step: steps.StepScaleDown, Items: []engine.PlanItem{
			{Action: engine.ActionDelete, Kind: "server", Name: "demo-worker-2", Detail: "cordon, drain, delete the Kubernetes node and the server"},
			{Action: engine.ActionDelete, Kind: "volume", Name: "demo-worker-2-data", Detail: "its data is lost"},
		}}, []string{"scale-down 0 to create, 0 to reuse, 0 to update, 2 to delete",
			"- server demo-worker-2 cordon, drain", "- volume demo-worker-2-data its data is lost"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h, _ := newHarness(t, Options{Width: c.width, Height: 40})
			h.open(scrReview)
			h.Settle()
			h.Send(PlanMsg{Plans: []engine.Plan{c.plan}})
			h.Settle()
			mustContain(t, h.m.View(), c.want...)
		})
	}
}
