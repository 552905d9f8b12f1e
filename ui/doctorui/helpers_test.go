package doctorui

import (
	"context"
	"io"
	"runtime"
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
	buf := make([]byte, 64<<10)
	stack := string(buf[:runtime.Stack(buf, false)])
	if strings.Contains(stack, "doctorui.(*Model).Update") || strings.Contains(stack, "doctorui.(*Model).View") {
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
		"provider-id":        {Status: doctor.StatusSkip, Explanation: "no kubeconfig: the cluster is not bootstrapped yet"},
		"cilium-talos":       {Status: doctor.StatusSkip, Explanation: "no kubeconfig: the cluster is not bootstrapped yet"},
		"dns-ipv6":           {Status: doctor.StatusError, Evidence: []string{"resolver 127.0.0.1:53"}, Explanation: "could not read DNS: read udp 127.0.0.1:53: i/o timeout", Fix: "check that the source is reachable and the credentials are valid, then run the doctor again"},
		"external-dns-owner": {Status: doctor.StatusSkip, Explanation: "no domains to check: pass --domain or set domains in the spec"},
		"helmfile-v1":        {Status: doctor.StatusSkip, Explanation: "no repository: pass --repo"},
		"sops-rules":         {Status: doctor.StatusSkip, Explanation: "no repository: pass --repo"},
	}
}

// harness drives a model like bubbletea does: Update's commands run in
// goroutines and their messages come back through a channel, processed when
// the test says. Spinner ticks are dropped so frames stay deterministic.
type harness struct {
	t    testing.TB
	m    *Model
	msgs chan tea.Msg
	done chan struct{}
	quit atomic.Bool
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
	h := &harness{t: t, m: newModel(context.Background(), f.run, f.checks, o, testRenderer(p)),
		msgs: make(chan tea.Msg, 256), done: make(chan struct{})}
	t.Cleanup(func() {
		h.m.stop()
		close(h.done)
	})
	h.run(h.m.Init())
	return h
}

func (h *harness) run(cmd tea.Cmd) {
	if cmd == nil {
		return
	}
	go func() { h.deliver(cmd()) }()
}

func (h *harness) deliver(msg tea.Msg) {
	switch m := msg.(type) {
	case nil:
		return
	case tea.BatchMsg:
		for _, c := range m {
			h.run(c)
		}
		return
	case spinner.TickMsg:
		return
	case tea.QuitMsg:
		h.quit.Store(true)
		return
	}
	select {
	case h.msgs <- msg:
	case <-h.done:
	}
}

// send runs msg through Update and View.
func (h *harness) send(msg tea.Msg) {
	_, cmd := h.m.Update(msg)
	_ = h.m.View()
	h.run(cmd)
}

// key sends keys by name: "enter", "esc", "up", "down", or runes like "r".
func (h *harness) key(names ...string) {
	special := map[string]tea.KeyType{
		"enter": tea.KeyEnter, "esc": tea.KeyEsc, "up": tea.KeyUp, "down": tea.KeyDown, "ctrl+c": tea.KeyCtrlC,
	}
	for _, n := range names {
		if k, ok := special[n]; ok {
			h.send(tea.KeyMsg{Type: k})
			continue
		}
		h.send(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune(n)})
	}
}

// waitFor processes messages until cond holds.
func (h *harness) waitFor(what string, cond func() bool) {
	h.t.Helper()
	deadline := time.After(5 * time.Second)
	for !cond() {
		select {
		case msg := <-h.msgs:
			h.send(msg)
		case <-time.After(2 * time.Millisecond): // conditions set by goroutines
		case <-deadline:
			h.t.Fatalf("timed out waiting for %s; screen:\n%s", what, h.m.View())
		}
	}
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
	h.waitFor("the run to finish", func() bool { return !h.m.running })
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
		h.key("down")
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
