package doctorui

import (
	"context"
	"io"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/charmbracelet/bubbles/spinner"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"
	"github.com/muesli/termenv"

	"github.com/ohmytalos/ohmytalos/internal/doctor"
	"github.com/ohmytalos/ohmytalos/ui/internal/testloop"
)

// fakeRun stands in for doctor.Run: it reports preset results in registry
// order, holds the checks named in block until release is closed or the
// run is cancelled, and records every call. It fails the test when it is
// called from inside Update or View.
type fakeRun struct {
	t       testing.TB
	checks  []doctor.Check
	results map[string]doctor.Result
	block   map[string]bool
	release chan struct{}

	mu        sync.Mutex
	calls     [][]string
	cancelled atomic.Int32
}

func newFakeRun(t testing.TB, block ...string) *fakeRun {
	f := &fakeRun{t: t, checks: doctor.Checks(), results: sampleResults(), block: map[string]bool{}, release: make(chan struct{})}
	for _, id := range block {
		f.block[id] = true
	}
	return f
}

func (f *fakeRun) run(ctx context.Context, ids []string, report func(doctor.Result)) []doctor.Result {
	if stack, inside := testloop.InUpdateOrView("doctorui.(*Model)"); inside {
		f.t.Errorf("checks ran inside Update or View: they must run in a tea.Cmd\n%s", stack)
	}
	f.mu.Lock()
	f.calls = append(f.calls, append([]string(nil), ids...))
	f.mu.Unlock()
	want := map[string]bool{}
	for _, id := range ids {
		want[id] = true
	}
	var out []doctor.Result
	var held []doctor.Check
	for _, c := range f.checks {
		if len(ids) > 0 && !want[c.ID] {
			continue
		}
		if f.block[c.ID] {
			held = append(held, c)
			continue
		}
		r := f.result(c)
		report(r)
		out = append(out, r)
	}
	for _, c := range held {
		select {
		case <-f.release:
			r := f.result(c)
			report(r)
			out = append(out, r)
		case <-ctx.Done():
			f.cancelled.Add(1)
			return out
		}
	}
	return out
}

func (f *fakeRun) result(c doctor.Check) doctor.Result {
	r, ok := f.results[c.ID]
	if !ok {
		r = doctor.Result{Status: doctor.StatusPass}
	}
	r.ID, r.Title = c.ID, c.Title
	return r
}

func (f *fakeRun) callList() [][]string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([][]string(nil), f.calls...)
}

// sampleResults is one of every outcome, with the wording real checks use.
func sampleResults() map[string]doctor.Result {
	return map[string]doctor.Result{
		"vip-link": {Status: doctor.StatusPass, Evidence: []string{"demo-cp-1: eth1 is up (mtu 1450)", "demo-cp-2: eth1 is up (mtu 1450)"}, Duration: 120 * time.Millisecond},
		"etcd":     {Status: doctor.StatusWarn, Evidence: []string{"3 members: demo-cp-1, demo-cp-2, demo-cp-3", "last snapshot: 3 days ago"}, Explanation: "the last etcd snapshot is older than 24 hours: a lost quorum now loses three days of cluster state", Fix: "check the etcd backup CronJob's logs (kubectl -n kube-system logs job/etcd-backup) and run one by hand"},
		"lb-targets": {Status: doctor.StatusFail, Evidence: []string{"load balancer demo-ingress: label_selector ohmytalos.io/pool=worker resolves to 0 servers"},
			Explanation: "the load balancer has no targets, so every request to the ingress fails with 503: the only servers are control planes, and Kubernetes excludes nodes labelled node.kubernetes.io/exclude-from-external-load-balancers",
			Fix:         "add a worker pool with loadBalancer: true, or remove the label from the control planes (not recommended)", Duration: 2 * time.Second},
		"kubeconfig-reachable": {Status: doctor.StatusSkip, Explanation: "no kubeconfig: nothing to dial"},
		"provider-id":          {Status: doctor.StatusSkip, Explanation: "no kubeconfig: the cluster is not bootstrapped yet"},
		"cilium-talos":         {Status: doctor.StatusSkip, Explanation: "no kubeconfig: the cluster is not bootstrapped yet"},
		"metadata-policy":      {Status: doctor.StatusSkip, Explanation: "no kubeconfig: the Kubernetes API is not available to the doctor"},
		"dns-ipv6":             {Status: doctor.StatusError, Evidence: []string{"resolver 127.0.0.1:53"}, Explanation: "could not read DNS: read udp 127.0.0.1:53: i/o timeout", Fix: "check that the source is reachable and the credentials are valid, then run the doctor again"},
		"external-dns-owner":   {Status: doctor.StatusSkip, Explanation: "no domains to check: pass --domain or set domains in the spec"},
		"helmfile-v1":          {Status: doctor.StatusSkip, Explanation: "no repository: pass --repo"},
		"sops-rules":           {Status: doctor.StatusSkip, Explanation: "no repository: pass --repo"},
	}
}

// harness drives a model through a testloop.Loop: the test decides when
// the messages of commands are processed. Spinner ticks are dropped so
// frames stay deterministic.
type harness struct {
	*testloop.Loop
	t testing.TB
	m *Model
}

func testRenderer(p termenv.Profile) *lipgloss.Renderer {
	r := lipgloss.NewRenderer(io.Discard)
	r.SetColorProfile(p)
	r.SetHasDarkBackground(true)
	return r
}

func newHarness(t testing.TB, f *fakeRun, o Options) *harness {
	return newHarnessProfile(t, f, o, termenv.Ascii)
}

func newHarnessProfile(t testing.TB, f *fakeRun, o Options, p termenv.Profile) *harness {
	return newHarnessModel(t, newModel(context.Background(), f.run, f.checks, o, testRenderer(p)))
}

// newHarnessModel starts the loop of m, stopping m when the test ends.
func newHarnessModel(t testing.TB, m *Model) *harness {
	h := &harness{Loop: testloop.New(t, m, isSpinnerTick), t: t, m: m}
	t.Cleanup(m.stop)
	h.Run(m.Init())
	return h
}

// isSpinnerTick says msg is a spinner frame.
func isSpinnerTick(msg tea.Msg) bool {
	_, ok := msg.(spinner.TickMsg)
	return ok
}

// doneCount is how many rows have a result.
func (h *harness) doneCount() int {
	n := 0
	for _, r := range h.m.rows {
		if r.done {
			n++
		}
	}
	return n
}

// idle waits until the run in flight is over.
func (h *harness) idle() {
	h.t.Helper()
	h.WaitFor("the run to finish", func() bool { return !h.m.running })
}

// rowOf returns the index of a check's row.
func (h *harness) rowOf(id string) int {
	for i, r := range h.m.rows {
		if r.id == id {
			return i
		}
	}
	h.t.Fatalf("no row for %s", id)
	return -1
}

// selectRow moves the selection to a check with the down key.
func (h *harness) selectRow(id string) {
	h.t.Helper()
	for h.m.selected < h.rowOf(id) {
		h.Key("down")
	}
}

// checkSize fails when a frame is taller or wider than the terminal.
func checkSize(t *testing.T, out string, w, h int) {
	t.Helper()
	lines := strings.Split(out, "\n")
	if len(lines) != h {
		t.Errorf("frame has %d lines, terminal has %d", len(lines), h)
	}
	for i, l := range lines {
		if lw := lipgloss.Width(l); lw > w {
			t.Errorf("line %d is %d columns wide, terminal has %d: %q", i+1, lw, w, l)
		}
	}
}
