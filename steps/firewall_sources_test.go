package steps

import (
	"context"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/hetznercloud/hcloud-go/v2/hcloud"

	"github.com/ohmytalos/ohmytalos/internal/engine"
	"github.com/ohmytalos/ohmytalos/internal/spec"
)

// firewallSourcesOf returns each rule's port and sources as Hetzner holds them.
func firewallSourcesOf(t *testing.T, d *Deps, sp *spec.Spec) map[string][]string {
	t.Helper()
	c, err := d.HCloud(context.Background(), sp)
	if err != nil {
		t.Fatal(err)
	}
	fws, err := c.Firewall.AllWithOpts(context.Background(), hcloud.FirewallListOpts{ListOpts: hcloud.ListOpts{LabelSelector: "ohmytalos.io/cluster=" + sp.Name}})
	if err != nil || len(fws) != 1 {
		t.Fatalf("firewalls: %v %v", fws, err)
	}
	out := map[string][]string{}
	for _, r := range fws[0].Rules {
		for _, n := range r.SourceIPs {
			out[*r.Port] = append(out[*r.Port], n.String())
		}
	}
	return out
}

func echoServer(t *testing.T, addr string) string {
	t.Helper()
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { _, _ = w.Write([]byte(addr)) }))
	t.Cleanup(s.Close)
	return s.URL
}

func planItems(t *testing.T, d *Deps, env *engine.Env) engine.Plan {
	t.Helper()
	p, err := (&Pools{d}).Plan(context.Background(), env)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// The default firewall admits only the operator's detected address; a
// changed address shows in the plan as an update and is applied as one.
func TestFirewallAdmitsOnlyTheOperator(t *testing.T) {
	t.Parallel()
	w := newWorld(t, "../examples/seed.yaml")
	d := w.deps()
	env := w.env(t)
	p := planItems(t, d, env)
	if !slices.ContainsFunc(p.Items, func(i engine.PlanItem) bool {
		return i.Kind == "firewall" && strings.Contains(i.Detail, "127.0.0.1/32") && strings.Contains(i.Detail, "your address")
	}) {
		t.Errorf("plan does not show the detected address: %+v", p.Items)
	}
	if err := engine.New(&Secrets{d}, &Network{d}, &Pools{d}).Run(context.Background(), env, engine.Options{}, nil); err != nil {
		t.Fatal(err)
	}
	want := map[string][]string{"50000": {"127.0.0.1/32"}, "6443": {"127.0.0.1/32"}}
	if got := firewallSourcesOf(t, d, w.Spec); !mapsEqual(got, want) {
		t.Errorf("firewall sources = %v, want %v", got, want)
	}

	// The operator moved: a new process detects another address.
	d2 := w.deps()
	d2.IPEchoURL = echoServer(t, "203.0.113.7") + "," + echoServer(t, "2001:db8:5:6::9")
	env2 := w.env(t)
	p = planItems(t, d2, env2)
	if !slices.ContainsFunc(p.Items, func(i engine.PlanItem) bool {
		return i.Action == engine.ActionUpdate && strings.Contains(i.Detail, "127.0.0.1/32 -> 203.0.113.7/32, 2001:db8:5:6::/64")
	}) {
		t.Errorf("plan does not show the address change as an update: %+v", p.Items)
	}
	// A plain apply (same spec, every step done) runs pools again: the
	// firewall follows the operator without --only.
	var updates, reruns []engine.Event
	err := engine.New(&Secrets{d2}, &Network{d2}, &Pools{d2}).Run(context.Background(), env2, engine.Options{}, func(ev engine.Event) {
		if ev.Action == engine.ActionUpdate {
			updates = append(updates, ev)
		}
		if ev.Kind == engine.KindWarning && strings.Contains(ev.Message, "runs again: your address changed") {
			reruns = append(reruns, ev)
		}
	})
	if len(reruns) != 1 || reruns[0].Step != StepPools {
		t.Errorf("re-run notices = %+v, want one for pools", reruns)
	}
	if err != nil {
		t.Fatal(err)
	}
	if len(updates) != 1 || !strings.Contains(updates[0].Message, "203.0.113.7/32") {
		t.Errorf("update events = %+v", updates)
	}
	want = map[string][]string{"50000": {"203.0.113.7/32", "2001:db8:5:6::/64"}, "6443": {"203.0.113.7/32", "2001:db8:5:6::/64"}}
	if got := firewallSourcesOf(t, d2, w.Spec); !mapsEqual(got, want) {
		t.Errorf("firewall sources after the move = %v, want %v", got, want)
	}
	if p := planItems(t, d2, env2); slices.ContainsFunc(p.Items, func(i engine.PlanItem) bool { return i.Action == engine.ActionUpdate }) {
		t.Errorf("plan after the update still shows one: %+v", p.Items)
	}

	// The echo service is down: the recorded address is kept, with a note.
	d3 := w.deps()
	d3.IPEchoURL = "http://127.0.0.1:1/ip"
	p = planItems(t, d3, w.env(t))
	if len(p.Notes) == 0 || !strings.Contains(p.Notes[0], "could not detect your address") {
		t.Errorf("notes = %v", p.Notes)
	}
}

func mapsEqual(a, b map[string][]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if !sameSet(v, b[k]) {
			return false
		}
	}
	return true
}

// The plan's notes: the internet only when the spec says so, load
// balancers that firewalls do not filter, a firewall that may not admit an
// address that cannot be detected, and a clear error when nothing can be
// detected.
func TestFirewallPlanNotes(t *testing.T) {
	t.Parallel()
	w := newWorld(t, "../examples/seed.yaml")
	env := w.env(t)
	d := w.deps()
	d.IPEchoURL = "http://127.0.0.1:1/ip"
	p := planItems(t, d, env)
	if len(p.Notes) != 1 || !strings.Contains(p.Notes[0], "firewall.allow") || !strings.Contains(p.Notes[0], "http://127.0.0.1:1/ip") {
		t.Errorf("undetectable address: notes = %v", p.Notes)
	}
	if _, err := d.firewallSources(context.Background(), env); err == nil || !strings.Contains(err.Error(), "firewall.allow") {
		t.Errorf("apply's sources: err = %v, want the error naming firewall.allow", err)
	}

	open := *w.Spec
	open.Firewall.Allow = []string{"0.0.0.0/0", "::/0"}
	env.Spec = &open
	p = planItems(t, d, env)
	if len(p.Notes) != 1 || !strings.Contains(p.Notes[0], "whole internet") {
		t.Errorf("open firewall notes = %v", p.Notes)
	}

	lb := *w.Spec
	lb.Firewall.Allow = []string{"198.51.100.0/24"}
	lb.Endpoint.Mode = spec.EndpointLoadBalancer
	env.Spec = &lb
	// The address is unknown and firewall.allow may not admit it: in
	// loadbalancer mode too, bootstrap dials the nodes' own addresses.
	p = planItems(t, d, env)
	if len(p.Notes) != 2 || !strings.Contains(p.Notes[0], "could not be detected") || !strings.Contains(p.Notes[0], "--operator-address") ||
		!strings.Contains(p.Notes[1], "do not filter load balancers") {
		t.Errorf("loadbalancer notes = %v", p.Notes)
	}
}

func TestFormatRules(t *testing.T) {
	a := firewallRules([]string{"203.0.113.7/32", "2001:db8::/64"})
	b := firewallRules([]string{"2001:db8::/64", "203.0.113.7/32"})
	if formatRules(a) != formatRules(b) {
		t.Errorf("order matters: %q vs %q", formatRules(a), formatRules(b))
	}
	if formatRules(a) == formatRules(firewallRules([]string{"203.0.113.7/32"})) {
		t.Error("a dropped range is not a change")
	}
	if firewallRules(nil) != nil {
		t.Error("no sources must give no rules")
	}
}
