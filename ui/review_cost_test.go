package ui

import (
	"testing"

	"github.com/ohmytalos/ohmytalos/internal/engine"
)

// TestReviewShowsTheCostChange: on a cluster an apply finished with two
// workers, lowering the count to one shows the running cost and what the
// change saves, beside the new total.
func TestReviewShowsTheCostChange(t *testing.T) {
	g, b := guardedBackend(t)
	applied, err := b.Env.Spec.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	if err := b.Env.State.PutData(engine.DataAppliedSpec, string(applied)); err != nil {
		t.Fatal(err)
	}
	h := newHarnessFor(t, g, b, Options{Width: 120, Height: 40})
	h.Settle()
	h.m.c.spec.Pools[0].Count--
	h.open(scrReview)
	h.Settle()
	view := h.m.View()
	mustContain(t, view, "running now", "change")
	if a, e := h.m.c.applied, h.m.c.estimate; a == nil || e == nil || e.MonthlyNet >= a.MonthlyNet {
		t.Fatalf("applied %v, new %v: one worker fewer must cost less", a, e)
	} else {
		mustContain(t, view, "-"+(a.MonthlyNet-e.MonthlyNet).Format(2))
	}
}
