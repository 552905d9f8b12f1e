package ui

import (
	"context"
	"os"
	"strings"
	"testing"

	"github.com/charmbracelet/x/exp/golden"

	"github.com/ohmytalos/ohmytalos/internal/spec"
	"github.com/ohmytalos/ohmytalos/steps"
)

// preflightBackend is the test backend with a pre-flight that reports
// findings (counting its calls through the I/O guard).
func preflightBackend(t *testing.T, g *guard, fs steps.Findings) Backend {
	b, _ := testBackend(t, g)
	b.Preflight = func(ctx context.Context, s *spec.Spec) (steps.Findings, error) {
		g.io("preflight")
		return fs, nil
	}
	return b
}

var lockout = steps.Findings{
	{Check: steps.CheckReach, Severity: steps.SeverityError, Field: "firewall.allow",
		Reason: "the firewall will admit [203.0.113.7/32] to ports 50000 (Talos) and 6443 (Kubernetes), not your address [127.0.0.1]",
		Fix:    "add [127.0.0.1/32] to firewall.allow"},
	{Check: steps.CheckLimits, Severity: steps.SeverityWarning, Field: "limits.servers",
		Reason: "apply creates 5 servers; with the 7 the project holds that is 12", Fix: "write your limit as limits.servers"},
	{Check: steps.CheckSnapshots, Severity: steps.SeverityNote, Field: "schematics.worker",
		Reason: "snapshot talos-v1.13.9-worker-amd64 (amd64) does not exist yet: the images step builds it"},
}

// TestReviewShowsPreflight: the review runs the pre-flight in a command,
// shows every finding above the confirmation, and an error keeps the spec
// from being written, as it would stop apply.
func TestReviewShowsPreflight(t *testing.T) {
	g := &guard{t: t}
	h := newHarnessFor(t, g, preflightBackend(t, g, lockout), Options{Width: 120, Height: 40})
	h.open(scrReview)
	if n := g.count("preflight"); n != 1 {
		t.Fatalf("pre-flight ran %d times, want once", n)
	}
	view := h.m.View()
	mustContain(t, view, "✗ pre-flight firewall.allow: the firewall will admit", "! pre-flight limits.servers:", "· schematics.worker: snapshot")
	h.Key("s")
	view = h.m.View()
	mustContain(t, view, "pre-flight found 1 error(s) that would stop apply")
	if strings.Contains(view, "Write the spec to") {
		t.Errorf("confirmation opened despite a pre-flight error:\n%s", view)
	}
	if _, err := os.Stat("ohmytalos.yaml"); err == nil {
		t.Error("spec written despite a pre-flight error")
	}
	h.open(scrReview) // same spec: not checked again
	if n := g.count("preflight"); n != 1 {
		t.Errorf("pre-flight ran %d times for one spec", n)
	}
}

// TestReviewPreflightThenConfirm: without errors the findings stay above
// the confirmation box, which then opens.
func TestReviewPreflightThenConfirm(t *testing.T) {
	orig, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	g := &guard{t: t}
	h := newHarnessFor(t, g, preflightBackend(t, g, lockout[1:]), Options{Width: 80, Height: 24})
	h.open(scrReview)
	h.Key("s")
	view := h.m.View()
	pre, confirm := strings.Index(view, "! pre-flight limits.servers"), strings.Index(view, "Write the spec to")
	if pre < 0 || confirm < 0 || pre > confirm {
		t.Errorf("pre-flight (at %d) must come before the confirmation (at %d):\n%s", pre, confirm, view)
	}
	checkSize(t, view, 80, 24)
	t.Chdir(orig) // golden files live in this package's testdata
	golden.RequireEqual(t, []byte(view))
}

// TestReviewDropsStalePreflight: findings of an older spec are not shown.
func TestReviewDropsStalePreflight(t *testing.T) {
	var p preflightPanel
	p.start("new")
	p.receive(PreflightMsg{Hash: "old", Findings: lockout})
	if !p.running || len(p.findings) != 0 {
		t.Errorf("stale findings taken: %+v", p)
	}
	p.receive(PreflightMsg{Hash: "new", Findings: lockout})
	if p.running || p.errors() != 1 {
		t.Errorf("panel = %+v", p)
	}
}
