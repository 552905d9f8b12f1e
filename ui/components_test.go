package ui

import (
	"strings"
	"testing"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/ohmytalos/ohmytalos/internal/engine"
	"github.com/ohmytalos/ohmytalos/internal/spec"
)

func TestRateLimitFromEvents(t *testing.T) {
	_, b := guardedBackend(t)
	m := New(b, Options{Width: 120, Height: 40, NoColor: true}).(*Model)
	m.Update(tea.WindowSizeMsg{Width: 120, Height: 40})
	m.observe(engine.Event{Step: "secrets", Kind: engine.KindLog, Message: "created server demo-cp-1"})
	if m.rateRemaining != -1 {
		t.Errorf("an event without a rate limit changed it to %d", m.rateRemaining)
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
