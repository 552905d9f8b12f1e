package ui

import (
	"strings"
	"testing"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/ohmytalos/ohmytalos/internal/engine"
	"github.com/ohmytalos/ohmytalos/internal/netplan"
	"github.com/ohmytalos/ohmytalos/internal/spec"
)

func TestRateLimitFromEvents(t *testing.T) {
	g := &guard{t: t}
	b, _ := testBackend(t, g)
	m := New(b, Options{Width: 120, Height: 40, NoColor: true}).(*Model)
	m.Update(tea.WindowSizeMsg{Width: 120, Height: 40})
	m.observe(engine.Event{Step: "secrets", Kind: engine.KindLog, Message: "created server demo-cp-1"})
	if m.c.rateRemaining != -1 {
		t.Errorf("an event without a rate limit changed it to %d", m.c.rateRemaining)
	}
	m.observe(engine.Event{Step: "pools", Kind: engine.KindLog, RateLimit: &engine.RateLimit{Remaining: 3412, Limit: 3600}})
	if !strings.Contains(m.View(), "API 3412 left") {
		t.Errorf("status bar does not show the requests left:\n%s", m.View())
	}
}

func TestDefaultAdapt(t *testing.T) {
	s := spec.Default("demo")
	s.Pools = append(s.Pools, spec.Pool{Name: "gpu", ServerType: "cax21", Count: 1, Subnet: "10.0.3.0/24", Location: "nbg1", Schematic: "gpu", VolumeSize: 50})
	s.Schematics.Extra = map[string]spec.Schematic{"gpu": {Extensions: []string{"siderolabs/nvidia-container-toolkit"}}}
	l, u := DefaultAdapt(s)
	if l.Network != "10.0.0.0/16" || l.VIP != "10.0.1.100" || len(l.Subnets) != 3 {
		t.Fatalf("layout = %+v", l)
	}
	if l.Subnets[0].Field != "controlPlane.subnet" || l.Subnets[2].Field != "pools[1].subnet" || l.Subnets[0].Count != 3 {
		t.Errorf("subnets = %+v", l.Subnets)
	}
	if len(u.Pools) != 3 || u.Pools[2].VolumeGB != 50 || !u.Pools[0].PublicIPv4 || len(u.LoadBalancers) != 1 {
		t.Errorf("usage = %+v", u)
	}
	var names []string
	for _, sn := range u.Snapshots {
		names = append(names, sn.Name)
	}
	if got := strings.Join(names, ","); got != "controlPlane-amd64,worker-amd64,gpu-arm64" {
		t.Errorf("snapshots = %s", got)
	}
	s.Endpoint.Mode = spec.EndpointLoadBalancer
	if _, u := DefaultAdapt(s); len(u.LoadBalancers) != 2 {
		t.Errorf("loadbalancer endpoint mode prices %d load balancers, want 2", len(u.LoadBalancers))
	}
}

func TestSubnetMap(t *testing.T) {
	st := NewStyles(nil, true)
	l := netplan.Layout{Network: "10.0.0.0/22", Pods: "10.42.0.0/16", Services: "10.0.3.0/24", VIP: "10.0.1.100",
		Subnets: []netplan.Subnet{{Name: "control plane", CIDR: "10.0.1.0/24"}, {Name: "worker", CIDR: "10.0.1.0/25"}}}
	out := subnetMap(st, l, 60)
	// Four /24 cells: free, control plane and worker overlapping, free, services.
	if !strings.Contains(out, "[·!·s]") {
		t.Errorf("map row wrong:\n%s", out)
	}
	for _, want := range []string{"10.0.0.0/22: 4 × /24", "VIP 10.0.1.100", "pods 10.42.0.0/16 outside"} {
		if !strings.Contains(out, want) {
			t.Errorf("map lacks %q:\n%s", want, out)
		}
	}
	if out := subnetMap(st, netplan.Layout{Network: "10.0.0.0/33"}, 60); !strings.Contains(out, "does not parse") {
		t.Errorf("bad network not reported:\n%s", out)
	}
}

func TestProgressList(t *testing.T) {
	var p progressList
	for _, ev := range []engine.Event{
		{Step: "images", Kind: engine.KindStarted, Time: t0()},
		{Step: "images", Kind: engine.KindProgress, Resource: "image/worker-amd64", Message: "downloading", Bytes: 100 << 20, Total: 400 << 20},
		{Step: "images", Kind: engine.KindLog, Message: "schematic registered"},
		{Step: "images", Kind: engine.KindProgress, Resource: "image/worker-amd64", Message: "writing", Fraction: 0.5},
	} {
		p.add(ev)
	}
	st := NewStyles(nil, true)
	out := p.treeView(st, 100, t0().Add(90e9), 20)
	for _, want := range []string{"◌ images 1m30s", "image/worker-amd64 writing", " 50%", "100.0 MiB/400.0 MiB"} {
		if !strings.Contains(out, want) {
			t.Errorf("tree lacks %q:\n%s", want, out)
		}
	}
	p.add(engine.Event{Step: "images", Kind: engine.KindDone, Elapsed: 95e9})
	out = p.treeView(st, 100, t0(), 20)
	if !strings.Contains(out, "✓ images 1m35s") || !strings.Contains(out, "✓ image/worker-amd64") || strings.Contains(out, "%") {
		t.Errorf("finished tree wrong:\n%s", out)
	}
	p.add(engine.Event{Step: "servers", Kind: engine.KindStarted, Time: t0()})
	p.add(engine.Event{Step: "servers", Kind: engine.KindResource, Resource: "server/demo-cp-1", Action: "create"})
	if folded := p.treeView(st, 100, t0(), 3); !strings.Contains(folded, "✓ images 1m35s 1 resource(s)") || !strings.Contains(folded, "server/demo-cp-1") {
		t.Errorf("tree not folded to 3 lines:\n%s", folded)
	}
	if len(p.logs) != 1 {
		t.Errorf("logs = %d, want 1", len(p.logs))
	}
}

// A stage message that carries its own percentage does not print it a
// second time beside the bar.
func TestProgressPercentOnce(t *testing.T) {
	st := NewStyles(nil, true)
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
