package ui

import (
	"github.com/ohmytalos/ohmytalos/steps"
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"

	"github.com/ohmytalos/ohmytalos/internal/engine"
	"github.com/ohmytalos/ohmytalos/internal/spec"
)

// doneView opens the done screen after the add-ons step's events and
// returns what it shows, without colour.
func doneView(t *testing.T, addons engine.Status, evs []engine.Event) string {
	t.Helper()
	h, _ := newHarness(t, Options{Width: 120, Height: 40})
	h.Settle()
	for _, s := range deploySteps() {
		h.m.c.status[s] = engine.StepStatus{Name: s, Status: engine.StatusDone}
	}
	h.m.c.status[steps.StepAddons] = engine.StepStatus{Name: steps.StepAddons, Status: addons}
	for _, ev := range evs {
		h.Send(RunEventMsg{RunID: 7, Event: ev})
	}
	h.open(scrDone)
	return ansi.Strip(h.m.View())
}

func TestDoneScreenSaysTheClusterIsReady(t *testing.T) {
	view := doneView(t, engine.StatusDone, append(addonsWaitEvents(), addonsDone()...))
	mustContain(t, view, "Cluster demo is up and ready to use",
		"✓ 3/3 nodes Ready, 3 with a provider ID, 5/5 add-on workloads ready",
		"✓ add-ons applied: hcloud-secret, cilium, hcloud-ccm, hcloud-csi",
		"$ ohmytalos kubeconfig --sandbox --out kubeconfig")
	for _, no := range []string{"not ready", "missing"} {
		if strings.Contains(view, no) {
			t.Errorf("a ready cluster's done screen says %q:\n%s", no, view)
		}
	}
}

func TestDoneScreenSaysWhatIsMissing(t *testing.T) {
	view := doneView(t, engine.StatusFailed, append(addonsWaitEvents(), addonsTimeout()))
	mustContain(t, view, "Cluster demo is up but not ready to use",
		"✗ missing: addons: the cluster is not ready after 20m0s", "demo-worker-1: no CNI",
		"hcloud-csi-node 1/3 ready", "ohmytalos apply --only addons")
	if strings.Contains(view, "ready to use\n") && !strings.Contains(view, "not ready to use") {
		t.Errorf("a failed cluster is called ready:\n%s", view)
	}
}

// Without the step's error (a failure from an earlier run this wizard
// did not watch end), the last reports name what is missing.
func TestDoneScreenFallsBackToTheLastReports(t *testing.T) {
	var r readiness
	for _, ev := range addonsWaitEvents() {
		r.add(ev)
	}
	r.add(engine.Event{Step: steps.StepAddons, Kind: engine.KindFailed})
	var got []string
	for _, row := range r.missing() {
		got = append(got, row.resource)
	}
	if want := "node/demo-worker-1,node/demo-worker-2,daemonset/hcloud-csi-node"; strings.Join(got, ",") != want {
		t.Errorf("missing = %v, want %s", got, want)
	}
	if r.summary != "2/3 nodes Ready, 1 with a provider ID, 4/5 add-on workloads ready" {
		t.Errorf("summary = %q", r.summary)
	}
}

func TestBootstrapScreenFollowsTheAddons(t *testing.T) {
	h := bootstrapRun(t, addonsWaitEvents()...)
	view := ansi.Strip(h.m.View())
	mustContain(t, view, "waiting for the cluster: 2/3 nodes Ready, 1 with a provider ID, 4/5 add-on workloads ready",
		"✓ addon/cilium apply", "✓ node/demo-cp-1 Ready, provider ID hcloud://101",
		"● node/demo-worker-2 Ready; waiting for the cloud controller to set its provider ID",
		"● daemonset/hcloud-csi-node hcloud-csi: 1/3 ready")
	// A node that turns Ready is ticked; the summary follows the events.
	for _, ev := range addonsDone() {
		h.Send(RunEventMsg{RunID: 97, Event: ev})
	}
	h.Send(RunDoneMsg{RunID: 97})
	view = ansi.Strip(h.m.View())
	mustContain(t, view, "✓ cluster bootstrapped", "✓ 3/3 nodes Ready, 3 with a provider ID, 5/5 add-on workloads ready",
		"✓ node/demo-worker-2 Ready, provider ID hcloud://103")
	if strings.Contains(view, "waiting for the cluster") {
		t.Errorf("the finished run still says it waits:\n%s", view)
	}
}

func TestBootstrapScreenOpensWhatIsMissingAfterAddonsFail(t *testing.T) {
	h := bootstrapRun(t, append(addonsWaitEvents(), addonsTimeout())...)
	h.Send(RunDoneMsg{RunID: 97, Err: errString(addonsTimeout().Error)})
	h.Settle() // the status the backend reports first, then the state this test stands for
	for _, s := range deploySteps() {
		h.m.c.status[s] = engine.StepStatus{Name: s, Status: engine.StatusDone}
	}
	h.m.c.status[steps.StepAddons] = engine.StepStatus{Name: steps.StepAddons, Status: engine.StatusFailed}
	mustContain(t, ansi.Strip(h.m.View()), "enter what is missing")
	h.Key("enter")
	h.Settle()
	if h.m.active != scrDone {
		t.Fatalf("enter after the add-ons failed opened %s, want done", h.m.active)
	}
	mustContain(t, ansi.Strip(h.m.View()), "not ready to use", "demo-worker-1: no CNI")
}

// bootstrapRun is a harness on the bootstrap screen of a saved spec, with
// run 97 running and evs sent as its events.
func bootstrapRun(t *testing.T, evs ...engine.Event) *harness {
	t.Helper()
	h, _ := newHarness(t, Options{Width: 120, Height: 40})
	h.m.c.savedHash = h.m.c.spec.Hash()
	h.open(scrBootstrap)
	bs := h.m.screens[scrBootstrap].(*bootstrapScreen)
	bs.runID, bs.result = 97, runRunning
	for _, ev := range evs {
		h.Send(RunEventMsg{RunID: 97, Event: ev})
	}
	return h
}

type errString string

func (e errString) Error() string { return string(e) }

// With Cilium switched off the step waits only for provider IDs: the done
// screen must not call NotReady nodes ready to use.
func TestDoneScreenWithoutCNIIsNotReady(t *testing.T) {
	h, _ := newHarness(t, Options{Width: 120, Height: 40})
	h.Settle()
	off := false
	h.Send(SpecEditMsg{Edit: func(sp *spec.Spec) { sp.Addons.Cilium.Enabled = &off }})
	for _, s := range deploySteps() {
		h.m.c.status[s] = engine.StepStatus{Name: s, Status: engine.StatusDone}
	}
	h.Send(RunEventMsg{RunID: 7, Event: engine.Event{Step: steps.StepAddons, Kind: engine.KindProgress, Resource: "nodes",
		Message: "0/3 nodes Ready, 3 with a provider ID, 1/1 add-on workloads ready"}})
	h.Send(RunEventMsg{RunID: 7, Event: engine.Event{Step: steps.StepAddons, Kind: engine.KindDone}})
	h.open(scrDone)
	view := ansi.Strip(h.m.View())
	mustContain(t, view, "is up but not ready to use", "missing: a CNI", "0/3 nodes Ready")
}
