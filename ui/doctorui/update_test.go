package doctorui

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/charmbracelet/bubbles/spinner"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/ansi"
	"github.com/muesli/termenv"

	"github.com/ohmytalos/ohmytalos/internal/doctor"
)

func TestRunsEveryCheckOnStart(t *testing.T) {
	f := newFakeRun(t)
	h := newHarness(t, f, Options{Width: 80, Height: 24})
	h.idle()
	if got := f.callList(); len(got) != 1 || got[0] != nil {
		t.Fatalf("run calls = %v, want one call for every check (nil ids)", got)
	}
	rs := h.m.Results()
	if len(rs) != len(doctor.Checks()) {
		t.Fatalf("results = %d, want %d", len(rs), len(doctor.Checks()))
	}
	if st := rs[h.rowOf("lb-targets")].Status; st != doctor.StatusFail {
		t.Errorf("lb-targets status = %s, want fail", st)
	}
	if doctor.ExitCode(rs) != 1 {
		t.Errorf("exit code of the results = %d, want 1 (a check failed)", doctor.ExitCode(rs))
	}
}

func TestNavigationAndDetails(t *testing.T) {
	f := newFakeRun(t)
	h := newHarness(t, f, Options{Width: 80, Height: 24})
	h.idle()
	h.Key("up")
	if h.m.selected != 0 {
		t.Fatalf("up on the first row moved the selection to %d", h.m.selected)
	}
	for range len(h.m.rows) + 3 {
		h.Key("j")
	}
	if h.m.selected != len(h.m.rows)-1 {
		t.Fatalf("selection = %d after moving past the end, want the last row %d", h.m.selected, len(h.m.rows)-1)
	}
	target := slices.IndexFunc(h.m.rows, func(r row) bool { return r.id == "lb-targets" })
	for range h.m.selected - target { // from the last row up to lb-targets
		h.Key("k")
	}
	if id := h.m.rows[h.m.selected].id; id != "lb-targets" {
		t.Fatalf("selected %s, want lb-targets", id)
	}
	h.Key("enter")
	view := ansi.Strip(h.m.View())
	for _, want := range []string{"FAIL", "Evidence", "resolves to 0 servers", "Why", "exclude-from-external-load-balancers", "Fix", "esc back"} {
		if !strings.Contains(view, want) {
			t.Errorf("details lack %q:\n%s", want, view)
		}
	}
	h.Key("down") // scrolls the details, does not move the selection
	if id := h.m.rows[h.m.selected].id; id != "lb-targets" {
		t.Errorf("down in the details moved the selection to %s", id)
	}
	h.Key("esc")
	if h.m.detail {
		t.Fatal("esc did not return to the list")
	}
	if view := ansi.Strip(h.m.View()); !strings.Contains(view, "enter details") || strings.Contains(view, "Evidence") {
		t.Errorf("list view after esc:\n%s", view)
	}
}

func TestRerunAll(t *testing.T) {
	f := newFakeRun(t)
	h := newHarness(t, f, Options{Width: 80, Height: 24})
	h.idle()
	f.mu.Lock()
	f.results["lb-targets"] = doctor.Result{Status: doctor.StatusPass, Evidence: []string{"demo-ingress: 2 healthy targets"}}
	f.mu.Unlock()
	h.Key("r")
	if !h.m.running {
		t.Fatal("r did not start a run")
	}
	for _, r := range h.m.rows {
		if r.status != doctor.StatusRunning {
			t.Fatalf("row %s is %s right after r, want running", r.id, r.status)
		}
	}
	h.idle()
	calls := f.callList()
	if len(calls) != 2 || calls[1] != nil {
		t.Fatalf("run calls = %v, want a second call for every check", calls)
	}
	if st := h.m.rows[h.rowOf("lb-targets")].status; st != doctor.StatusPass {
		t.Errorf("lb-targets after the rerun = %s, want pass", st)
	}
}

func TestRerunIgnoredWhileRunning(t *testing.T) {
	f := newFakeRun(t, "mtu")
	h := newHarness(t, f, Options{Width: 80, Height: 24})
	h.WaitFor("11 results", func() bool { return h.doneCount() == 11 })
	if view := ansi.Strip(h.m.View()); strings.Contains(view, "rerun") {
		t.Errorf("help offers a rerun while checks run:\n%s", view)
	}
	h.Key("r")
	if n := len(f.callList()); n != 1 {
		t.Fatalf("r while running started another run: %d calls", n)
	}
	close(f.release)
	h.idle()
	if st := h.m.rows[h.rowOf("mtu")].status; st != doctor.StatusPass {
		t.Errorf("mtu = %s after release, want pass", st)
	}
	if view := ansi.Strip(h.m.View()); !strings.Contains(view, "r rerun all") {
		t.Errorf("help lacks the rerun key once idle:\n%s", view)
	}
}

func TestRerunSelectedFromDetails(t *testing.T) {
	f := newFakeRun(t)
	h := newHarness(t, f, Options{Width: 80, Height: 24})
	h.idle()
	h.selectRow("lb-targets")
	h.Key("enter")
	f.mu.Lock()
	f.results["lb-targets"] = doctor.Result{Status: doctor.StatusPass, Evidence: []string{"demo-ingress: 2 healthy targets"}}
	f.mu.Unlock()
	h.Key("r")
	if st := h.m.rows[h.rowOf("etcd")].status; st != doctor.StatusWarn {
		t.Errorf("rerunning one check touched etcd: %s", st)
	}
	h.idle()
	calls := f.callList()
	if len(calls) != 2 || !slices.Equal(calls[1], []string{"lb-targets"}) {
		t.Fatalf("run calls = %v, want a second call for lb-targets only", calls)
	}
	view := ansi.Strip(h.m.View())
	if !strings.Contains(view, "PASS") || !strings.Contains(view, "2 healthy targets") || strings.Contains(view, "FAIL") {
		t.Errorf("details not refreshed by the rerun:\n%s", view)
	}
}

func TestQuitCancelsTheRun(t *testing.T) {
	for _, k := range []string{"q", "ctrl+c"} {
		t.Run(k, func(t *testing.T) {
			f := newFakeRun(t, "mtu")
			h := newHarness(t, f, Options{Width: 80, Height: 24})
			h.WaitFor("11 results", func() bool { return h.doneCount() == 11 })
			h.Key(k)
			h.WaitFor("quit", func() bool { return h.Quit() && f.cancelled.Load() == 1 })
		})
	}
}

func TestStaleResultsAreDropped(t *testing.T) {
	f := newFakeRun(t)
	h := newHarness(t, f, Options{Width: 80, Height: 24})
	h.idle()
	h.Send(ResultMsg{RunID: h.m.runID - 1, Result: doctor.Result{ID: "etcd", Status: doctor.StatusFail}})
	h.Send(RunDoneMsg{RunID: h.m.runID - 1, Results: []doctor.Result{{ID: "etcd", Status: doctor.StatusFail}}})
	if st := h.m.rows[h.rowOf("etcd")].status; st != doctor.StatusWarn {
		t.Errorf("a result of an earlier run replaced etcd's: %s", st)
	}
}

func TestUnknownCheckGetsARow(t *testing.T) {
	f := newFakeRun(t)
	// Tall enough for every check and the added row without scrolling.
	h := newHarness(t, f, Options{Width: 80, Height: len(doctor.Checks()) + 10})
	h.idle()
	n := len(h.m.rows)
	h.Send(RunDoneMsg{RunID: h.m.runID, Results: []doctor.Result{{ID: "vip-lnk", Title: "unknown check", Status: doctor.StatusError, Explanation: `there is no check with id "vip-lnk"`}}})
	if len(h.m.rows) != n+1 || h.m.rows[n].id != "vip-lnk" {
		t.Fatalf("rows = %d, want the unknown check added", len(h.m.rows))
	}
	if !strings.Contains(ansi.Strip(h.m.View()), "vip-lnk") {
		t.Error("the unknown check is not listed")
	}
}

func TestSpinnerAnimatesOnlyWhileRunning(t *testing.T) {
	f := newFakeRun(t, "mtu")
	h := newHarness(t, f, Options{Width: 80, Height: 24})
	h.WaitFor("11 results", func() bool { return h.doneCount() == 11 })
	before := h.m.spinner.View()
	_, cmd := h.m.Update(h.m.spinner.Tick())
	if cmd == nil || h.m.spinner.View() == before {
		t.Fatal("a spinner tick while running neither advanced the frame nor scheduled the next")
	}
	close(f.release)
	h.idle()
	if _, cmd := h.m.Update(spinner.TickMsg{ID: h.m.spinner.ID()}); cmd != nil {
		t.Error("the spinner keeps ticking after the run ended")
	}
}

func TestSandboxBadgeAndNotes(t *testing.T) {
	for _, sandbox := range []bool{true, false} {
		f := newFakeRun(t)
		h := newHarness(t, f, Options{Width: 80, Height: 24, Sandbox: sandbox, Notes: []string{"Talos checks skip: no talosconfig yet"}})
		h.idle()
		view := ansi.Strip(h.m.View())
		if strings.Contains(view, "SANDBOX") != sandbox {
			t.Errorf("Sandbox=%v, view:\n%s", sandbox, view)
		}
		if !strings.Contains(view, "note: Talos checks skip: no talosconfig yet") {
			t.Errorf("note missing:\n%s", view)
		}
	}
}

func TestResizeAndScroll(t *testing.T) {
	f := newFakeRun(t)
	h := newHarness(t, f, Options{Width: 80, Height: 24})
	h.idle()
	h.Send(tea.WindowSizeMsg{Width: 60, Height: 10})
	for range len(h.m.rows) {
		h.Key("down")
	}
	out := h.m.View()
	checkSize(t, out, 60, 10)
	if !strings.Contains(ansi.Strip(out), "› SKIP  sops-rules") {
		t.Errorf("the selected last row is scrolled out of a small terminal:\n%s", out)
	}
	h.Key("enter")
	checkSize(t, h.m.View(), 60, 10)
}

func TestNewUsesBackgroundContext(t *testing.T) {
	f := newFakeRun(t)
	m := New(f.run, f.checks, Options{NoColor: true})
	if m.Init() == nil {
		t.Fatal("Init returned no command: the checks would never run")
	}
	m.(*Model).stop()
	var _ RunFunc = func(ctx context.Context, ids []string, report func(doctor.Result)) []doctor.Result { return nil }
}

func TestRunRefusesWithoutTerminal(t *testing.T) {
	// go test's stdin and stdout are not terminals.
	f := newFakeRun(t)
	if err := Run(context.Background(), f.run, f.checks, Options{}); !errors.Is(err, ErrNoTTY) {
		t.Fatalf("Run without a terminal = %v, want ErrNoTTY", err)
	}
	if n := len(f.callList()); n != 0 {
		t.Errorf("Run without a terminal ran the checks %d times", n)
	}
}

// TestWithTheRealDoctor plugs doctor.Run over an empty environment in:
// every check skips and the screen shows each reason.
func TestWithTheRealDoctor(t *testing.T) {
	run := func(ctx context.Context, ids []string, report func(doctor.Result)) []doctor.Result {
		return doctor.Run(ctx, &doctor.Env{}, ids, report)
	}
	h := newHarnessModel(t, newModel(context.Background(), run, doctor.Checks(), Options{Width: 120, Height: 40}, testRenderer(termenv.Ascii)))
	h.idle()
	rs := h.m.Results()
	if len(rs) != len(doctor.Checks()) {
		t.Fatalf("%d results, want %d", len(rs), len(doctor.Checks()))
	}
	view := ansi.Strip(h.m.View())
	for _, r := range rs {
		if r.Status != doctor.StatusSkip {
			t.Errorf("%s = %s over an empty environment, want skip", r.ID, r.Status)
		}
		if !strings.Contains(view, r.ID) {
			t.Errorf("%s is not listed", r.ID)
		}
	}
	if !strings.Contains(view, "skipped: no talosconfig") {
		t.Errorf("skip reasons are not shown:\n%s", view)
	}
}
