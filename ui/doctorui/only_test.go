package doctorui

import (
	"slices"
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"
)

// TestOnlyRunsTheChecksOfDashCheck is "doctor --check ID" on a terminal:
// only the named checks are listed, run on start and rerun with r.
func TestOnlyRunsTheChecksOfDashCheck(t *testing.T) {
	f := newFakeRun(t)
	only := []string{"dns-ipv6", "etcd"}
	h := newHarness(t, f, Options{Width: 80, Height: 24, Only: only})
	h.idle()
	var ids []string
	for _, r := range h.m.rows {
		ids = append(ids, r.id)
	}
	if !slices.Equal(ids, []string{"etcd", "dns-ipv6"}) {
		t.Errorf("rows = %v, want etcd and dns-ipv6 in registry order", ids)
	}
	if rs := h.m.Results(); len(rs) != 2 {
		t.Errorf("results = %d, want 2", len(rs))
	}
	view := ansi.Strip(h.m.View())
	if strings.Contains(view, "lb-targets") || !strings.Contains(view, "dns-ipv6") {
		t.Errorf("the screen lists other checks:\n%s", view)
	}
	h.Key("r")
	h.idle()
	calls := f.callList()
	if len(calls) != 2 {
		t.Fatalf("run calls = %v, want 2", calls)
	}
	for i, c := range calls {
		if !slices.Equal(c, only) {
			t.Errorf("call %d ran %v, want %v", i, c, only)
		}
	}
}
