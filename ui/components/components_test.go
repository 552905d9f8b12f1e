package components

import (
	"strings"
	"testing"
	"time"

	"github.com/ohmytalos/ohmytalos/internal/engine"
	"github.com/ohmytalos/ohmytalos/internal/netplan"
	"github.com/ohmytalos/ohmytalos/ui/common"
)

func t0() time.Time { return time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC) }

func TestSubnetMap(t *testing.T) {
	st := common.NewStyles(nil, true)
	l := netplan.Layout{Network: "10.0.0.0/22", Pods: "10.42.0.0/16", Services: "10.0.3.0/24", VIP: "10.0.1.100",
		Subnets: []netplan.Subnet{{Name: "control plane", CIDR: "10.0.1.0/24"}, {Name: "worker", CIDR: "10.0.1.0/25"}}}
	out := SubnetMap(st, l, 60)
	// Four /24 cells: free, control plane and worker overlapping, free, services.
	if !strings.Contains(out, "[·!·s]") {
		t.Errorf("map row wrong:\n%s", out)
	}
	for _, want := range []string{"10.0.0.0/22: 4 × /24", "VIP 10.0.1.100", "pods 10.42.0.0/16 outside"} {
		if !strings.Contains(out, want) {
			t.Errorf("map lacks %q:\n%s", want, out)
		}
	}
	if out := SubnetMap(st, netplan.Layout{Network: "10.0.0.0/33"}, 60); !strings.Contains(out, "does not parse") {
		t.Errorf("bad network not reported:\n%s", out)
	}
}

func TestProgressList(t *testing.T) {
	var p ProgressList
	for _, ev := range []engine.Event{
		{Step: "images", Kind: engine.KindStarted, Time: t0()},
		{Step: "images", Kind: engine.KindProgress, Resource: "image/worker-amd64", Message: "downloading", Bytes: 100 << 20, Total: 400 << 20},
		{Step: "images", Kind: engine.KindLog, Message: "schematic registered"},
		{Step: "images", Kind: engine.KindProgress, Resource: "image/worker-amd64", Message: "writing", Fraction: 0.5},
	} {
		p.Add(ev)
	}
	st := common.NewStyles(nil, true)
	out := p.TreeView(st, 100, t0().Add(90e9), 20)
	for _, want := range []string{"◌ images 1m30s", "image/worker-amd64 writing", " 50%", "100.0 MiB/400.0 MiB"} {
		if !strings.Contains(out, want) {
			t.Errorf("tree lacks %q:\n%s", want, out)
		}
	}
	p.Add(engine.Event{Step: "images", Kind: engine.KindDone, Elapsed: 95e9})
	out = p.TreeView(st, 100, t0(), 20)
	if !strings.Contains(out, "✓ images 1m35s") || !strings.Contains(out, "✓ image/worker-amd64") || strings.Contains(out, "%") {
		t.Errorf("finished tree wrong:\n%s", out)
	}
	p.Add(engine.Event{Step: "servers", Kind: engine.KindStarted, Time: t0()})
	p.Add(engine.Event{Step: "servers", Kind: engine.KindResource, Resource: "server/demo-cp-1", Action: "create"})
	if folded := p.TreeView(st, 100, t0(), 3); !strings.Contains(folded, "✓ images 1m35s 1 resource(s)") || !strings.Contains(folded, "server/demo-cp-1") {
		t.Errorf("tree not folded to 3 lines:\n%s", folded)
	}
	if len(p.Logs()) != 1 {
		t.Errorf("logs = %d, want 1", len(p.Logs()))
	}
}

// A stage message that carries its own percentage does not print it a
// second time beside the bar.
func TestProgressPercentOnce(t *testing.T) {
	st := common.NewStyles(nil, true)
	for _, tc := range []struct {
		stage    string
		fraction float64
		want     string
	}{
		{"create_server 81%", 0.81, "● server/a create_server ██████████░░  81%"},
		{"writing (81 %)", 0.81, "● server/a writing ██████████░░  81%"},
		{"81%", 0.81, "● server/a ██████████░░  81%"},
		{"booting", 0.4, "● server/a booting █████░░░░░░░  40%"},
		{"waiting for 100% of nodes", 0, "● server/a waiting for 100% of nodes"},
	} {
		r := resourceProgress{name: "server/a", stage: tc.stage, fraction: tc.fraction}
		if got := r.view(st, 80); got != tc.want {
			t.Errorf("stage %q at %.2f: %q, want %q", tc.stage, tc.fraction, got, tc.want)
		}
	}
}
