package steps

import (
	"context"
	"net"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hetznercloud/hcloud-go/v2/hcloud"

	"github.com/ohmytalos/ohmytalos/internal/cloud"
	"github.com/ohmytalos/ohmytalos/internal/engine"
	"github.com/ohmytalos/ohmytalos/internal/secrets"
	"github.com/ohmytalos/ohmytalos/internal/spec"
)

// appliedWorld is the seed cluster, applied, with the APIs open to the
// whole internet (the spec says so).
func appliedWorld(t *testing.T) *world {
	t.Helper()
	w := newWorld(t, "../examples/seed.yaml")
	w.Spec.Firewall.Allow = []string{"0.0.0.0/0", "::/0"}
	if _, err := w.apply(t, context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	return w
}

// client is an hcloud-go client of the sandbox, as the operator's own
// tools would use: what it sees is what Hetzner holds.
func (w *world) client() *hcloud.Client {
	return cloud.NewClient(w.SB.Token, cloud.Options{Endpoint: w.SB.HCloudURL, PollInterval: 10 * time.Millisecond})
}

// planOf returns the plan item of a kind and name in step's plan.
func (w *world) planStep(t *testing.T, step engine.StepName) engine.Plan {
	t.Helper()
	plans, err := engine.New(All(w.deps())...).Plan(context.Background(), w.env(t))
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range plans {
		if p.Step == step {
			return p
		}
	}
	t.Fatalf("no %s plan", step)
	return engine.Plan{}
}

func (w *world) planOf(t *testing.T, step engine.StepName, kind, name string) engine.PlanItem {
	t.Helper()
	plans, err := engine.New(All(w.deps())...).Plan(context.Background(), w.env(t))
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range plans {
		for _, it := range p.Items {
			if p.Step == step && it.Kind == kind && it.Name == name {
				return it
			}
		}
	}
	t.Fatalf("no %s %s in the %s plan: %+v", kind, name, step, plans)
	return engine.PlanItem{}
}

// runOnly runs one step (as apply --only) and returns its events.
func (w *world) runOnly(t *testing.T, step engine.StepName) []engine.Event {
	t.Helper()
	d := w.deps()
	var evs []engine.Event
	if err := engine.New(All(d)...).Run(context.Background(), w.env(t), engine.Options{Only: step, Redact: d.Redact},
		func(ev engine.Event) { evs = append(evs, ev) }); err != nil {
		t.Fatal(err)
	}
	return evs
}

func hasEvent(evs []engine.Event, kind engine.Kind, action engine.Action, resource string) bool {
	return slices.ContainsFunc(evs, func(ev engine.Event) bool {
		return ev.Kind == kind && ev.Action == action && ev.Resource == resource
	})
}

// TestFirewallDriftIsPlannedAndApplied narrows firewall.allow on an
// applied cluster: plan shows the rule update with the old and new
// sources, apply sets the rules, and Hetzner no longer opens 50000 and
// 6443 to the internet.
func TestFirewallDriftIsPlannedAndApplied(t *testing.T) {
	t.Parallel()
	w := appliedWorld(t)
	// The sandbox's operator is loopback: a list without it would lock
	// this test out of its own cluster, as it would an operator.
	w.Spec.Firewall.Allow = []string{"203.0.113.7/32"}
	if p := w.planStep(t, StepPools); !slices.ContainsFunc(p.Notes, func(n string) bool {
		return strings.Contains(n, "does not admit your address 127.0.0.1") && strings.Contains(n, "127.0.0.1/32")
	}) {
		t.Errorf("plan does not warn about the lock-out: %v", p.Notes)
	}
	w.Spec.Firewall.Allow = []string{"203.0.113.7/32", "127.0.0.1/32"}

	it := w.planOf(t, StepPools, "firewall", w.Spec.Name)
	if it.Action != engine.ActionUpdate || len(it.Changes) != 1 || it.Changes[0].Field != fieldRules {
		t.Fatalf("plan = %+v, want an update of the rules", it)
	}
	if c := it.Changes[0]; !strings.Contains(c.Old, "0.0.0.0/0") || !strings.Contains(c.Old, "::/0") ||
		!strings.Contains(c.New, "203.0.113.7/32") || strings.Contains(c.New, "0.0.0.0/0") {
		t.Errorf("change = %s", c)
	}

	var evs []engine.Event
	if _, err := w.apply(t, context.Background(), func(ev engine.Event) { evs = append(evs, ev) }); err != nil {
		t.Fatal(err)
	}
	if !hasEvent(evs, engine.KindResource, engine.ActionUpdate, "firewall/"+w.Spec.Name) {
		t.Error("apply reported no firewall update")
	}
	fws, err := w.client().Firewall.All(context.Background())
	if err != nil || len(fws) != 1 {
		t.Fatalf("firewalls %v, %v", fws, err)
	}
	ports := map[string]bool{}
	for _, r := range fws[0].Rules {
		if r.Port != nil {
			ports[*r.Port] = true
		}
		for _, src := range r.SourceIPs {
			if ones, _ := src.Mask.Size(); ones == 0 {
				t.Errorf("port %v still open to %s", r.Port, src.String())
			}
		}
		if cidrs(r.SourceIPs) != "127.0.0.1/32,203.0.113.7/32" {
			t.Errorf("port %v sources = %v", r.Port, r.SourceIPs)
		}
	}
	if !ports["50000"] || !ports["6443"] {
		t.Errorf("rules for ports %v, want 50000 and 6443", ports)
	}
	if it := w.planOf(t, StepPools, "firewall", w.Spec.Name); it.Action != engine.ActionReuse {
		t.Errorf("after apply the plan is %s %v, want reuse", it.Action, it.Changes)
	}
}

// TestLoadBalancerDriftIsRepaired changes the ingress load balancer behind
// ohmytalos' back (type, a service's health check, a deleted service, the
// target, a label); plan lists each change and apply puts them back.
//
// This is the load balancer ohmytalos owns whole: the ingress add-on off
// (with it on, the cloud controller owns services and targets; see
// TestIngressLoadBalancerIsHandedOver).
func TestLoadBalancerDriftIsRepaired(t *testing.T) {
	t.Parallel()
	w := newWorld(t, "../examples/seed.yaml")
	w.Spec.Firewall.Allow = []string{"0.0.0.0/0", "::/0"}
	off := false
	w.Spec.Addons.Ingress.Enabled = &off
	ctx := context.Background()
	if _, err := w.apply(t, ctx, nil); err != nil {
		t.Fatal(err)
	}
	c := w.client()
	lbs, err := c.LoadBalancer.All(ctx)
	if err != nil || len(lbs) != 1 {
		t.Fatalf("load balancers %v, %v", lbs, err)
	}
	lb := lbs[0]
	for _, svc := range lb.Services {
		if svc.HealthCheck.Protocol != hcloud.LoadBalancerServiceProtocolTCP || svc.HealthCheck.Port != svc.DestinationPort ||
			svc.HealthCheck.Interval != healthInterval || svc.HealthCheck.Timeout != healthTimeout || svc.HealthCheck.Retries != healthRetries {
			t.Errorf("service %d health check = %+v", svc.ListenPort, svc.HealthCheck)
		}
	}
	must := actionDone(t, ctx, c)
	must(c.LoadBalancer.ChangeType(ctx, lb, hcloud.LoadBalancerChangeTypeOpts{LoadBalancerType: &hcloud.LoadBalancerType{Name: "lb21"}}))
	must(c.LoadBalancer.UpdateService(ctx, lb, 80, hcloud.LoadBalancerUpdateServiceOpts{
		HealthCheck: &hcloud.LoadBalancerUpdateServiceOptsHealthCheck{Interval: hcloud.Ptr(30 * time.Second)}}))
	must(c.LoadBalancer.DeleteService(ctx, lb, 443))
	must(c.LoadBalancer.RemoveLabelSelectorTarget(ctx, lb, lb.Targets[0].LabelSelector.Selector))
	labels := map[string]string{"owner": "someone"}
	if _, _, err := c.LoadBalancer.Update(ctx, lb, hcloud.LoadBalancerUpdateOpts{Labels: labels}); err != nil {
		t.Fatal(err)
	}

	it := w.planOf(t, StepPools, "load-balancer", w.Spec.Name+"-ingress")
	var fields []string
	for _, ch := range it.Changes {
		fields = append(fields, ch.Field)
	}
	want := []string{fieldType, fieldService + "80", fieldService + "443", fieldTargets, fieldLabels}
	if it.Action != engine.ActionUpdate || !slices.Equal(fields, want) {
		t.Fatalf("plan = %s %v, want update of %v", it.Action, it.Changes, want)
	}

	w.runOnly(t, StepPools)
	got, _, err := c.LoadBalancer.GetByID(ctx, lb.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.LoadBalancerType.Name != "lb11" {
		t.Errorf("type = %s", got.LoadBalancerType.Name)
	}
	if len(got.Services) != 2 {
		t.Errorf("services = %+v", got.Services)
	}
	for _, svc := range got.Services {
		if formatService(svc) != formatService(lbService(svc.ListenPort)) {
			t.Errorf("service %s", formatService(svc))
		}
	}
	if !hasTarget(got, cloud.Selector(map[string]string{cloud.LabelCluster: w.Spec.Name, cloud.LabelIngress: "true"})) {
		t.Errorf("targets = %s", formatTargets(got))
	}
	if got.Labels["owner"] != "someone" || got.Labels[cloud.LabelCluster] != w.Spec.Name {
		t.Errorf("labels = %v: ohmytalos' labels must come back and others stay", got.Labels)
	}
	if it := w.planOf(t, StepPools, "load-balancer", w.Spec.Name+"-ingress"); it.Action != engine.ActionReuse {
		t.Errorf("after apply the plan is %s %v", it.Action, it.Changes)
	}
}

// TestServerDrift: a worker that lost its ingress label gets it back (so
// the load balancer targets it again), and a server type change is
// planned as "replace" and left alone by apply, with a warning.
func TestServerDrift(t *testing.T) {
	t.Parallel()
	w := appliedWorld(t)
	ctx := context.Background()
	c := w.client()
	sv, _, err := c.Server.GetByName(ctx, "demo-worker-1")
	if err != nil || sv == nil {
		t.Fatalf("server demo-worker-1: %v", err)
	}
	labels := mergedLabels(sv.Labels, nil)
	delete(labels, cloud.LabelIngress)
	if _, _, err := c.Server.Update(ctx, sv, hcloud.ServerUpdateOpts{Labels: labels}); err != nil {
		t.Fatal(err)
	}
	it := w.planOf(t, StepServers, "server", sv.Name)
	if it.Action != engine.ActionUpdate || len(it.Changes) != 1 || it.Changes[0].New != cloud.LabelIngress+"=true" {
		t.Fatalf("plan = %s %v", it.Action, it.Changes)
	}
	w.runOnly(t, StepServers)
	if got, _, _ := c.Server.GetByID(ctx, sv.ID); got.Labels[cloud.LabelIngress] != "true" {
		t.Errorf("labels after apply = %v", got.Labels)
	}

	w.Spec.Pools[0].ServerType = "cpx42"
	it = w.planOf(t, StepServers, "server", sv.Name)
	if it.Action != engine.ActionReplace || len(it.Changes) != 1 || it.Changes[0].Field != fieldServerType ||
		it.Changes[0].Old != "cpx32" || it.Changes[0].New != "cpx42" {
		t.Fatalf("plan = %s %v, want replace of the server type", it.Action, it.Changes)
	}
	evs := w.runOnly(t, StepServers)
	if !slices.ContainsFunc(evs, func(ev engine.Event) bool {
		return ev.Kind == engine.KindWarning && ev.Resource == "server/"+sv.Name && strings.Contains(ev.Message, "cpx32 -> cpx42")
	}) {
		t.Errorf("no warning about the server type: %+v", evs)
	}
	if got, _, _ := c.Server.GetByID(ctx, sv.ID); got.ServerType.Name != "cpx32" {
		t.Errorf("server type = %s: apply must not change it behind the operator's back", got.ServerType.Name)
	}

	// A server out of its placement group: Hetzner moves it only while
	// it is off, so a running one is reported, a stopped one moved.
	w.Spec.Pools[0].ServerType = "cpx32"
	wait := actionDone(t, ctx, c)
	wait(c.Server.Poweroff(ctx, sv))
	wait(c.Server.RemoveFromPlacementGroup(ctx, sv))
	it = w.planOf(t, StepServers, "server", sv.Name)
	if it.Action != engine.ActionUpdate || len(it.Changes) != 2 || it.Changes[0].Field != fieldPlacementGroup ||
		it.Changes[1].String() != "status: off -> running" {
		t.Fatalf("plan = %s %v, want an update of the placement group and the status", it.Action, it.Changes)
	}
	w.runOnly(t, StepServers)
	got, _, _ := c.Server.GetByID(ctx, sv.ID)
	if got.PlacementGroup == nil || got.PlacementGroup.Name != "demo-worker-1" || got.Status != hcloud.ServerStatusRunning {
		t.Errorf("after apply: placement group %v, status %s", got.PlacementGroup, got.Status)
	}
}

// TestCorrectedTokenReferenceIsUsed: the secrets step fails with a wrong
// token; pointing the reference at the right one in the same process (as
// the wizard does) uses the new token, not the cached client.
func TestCorrectedTokenReferenceIsUsed(t *testing.T) {
	t.Parallel()
	w := newWorld(t, "../examples/seed.yaml")
	d := w.deps()
	var mu sync.Mutex
	stored := "wrong-token"
	d.Resolver = secrets.NewResolver(secrets.Options{Env: func(k string) (string, bool) {
		mu.Lock()
		defer mu.Unlock()
		switch k {
		case "HCLOUD_TOKEN":
			return stored, true
		case "GOOD_TOKEN":
			return w.SB.Token, true
		}
		return "", false
	}})
	e := engine.New(All(d)...)
	env := w.env(t)
	err := e.Run(context.Background(), env, engine.Options{Only: StepSecrets, Redact: d.Redact}, nil)
	if err == nil || !strings.Contains(err.Error(), "rejected the token") {
		t.Fatalf("wrong token: err = %v", err)
	}
	env.Spec.Secrets.HCloudToken = spec.SecretRef{Provider: "env", Ref: "GOOD_TOKEN"}
	if err := e.Run(context.Background(), env, engine.Options{Only: StepSecrets, Redact: d.Redact}, nil); err != nil {
		t.Fatalf("corrected reference: %v", err)
	}
	if got := d.Redact("x wrong-token " + w.SB.Token); strings.Contains(got, "wrong-token") || strings.Contains(got, w.SB.Token) {
		t.Errorf("redaction lost a looked-up value: %q", got)
	}

	// The same reference, with the secret fixed where it points: the
	// rejected value was forgotten, so it is looked up again.
	env.Spec.Secrets.HCloudToken = spec.SecretRef{Provider: "env", Ref: "HCLOUD_TOKEN"}
	mu.Lock()
	stored = w.SB.Token
	mu.Unlock()
	if err := e.Run(context.Background(), env, engine.Options{Only: StepSecrets, Redact: d.Redact}, nil); err != nil {
		t.Fatalf("fixed secret behind the same reference: %v", err)
	}
}

func TestLoadBalancerCreateSendsHealthChecks(t *testing.T) {
	sp := spec.Default("demo")
	sp.Endpoint.Mode = spec.EndpointLoadBalancer
	off := false
	sp.Addons.Ingress.Enabled = &off
	for _, lb := range loadBalancerSpecs(sp, "") {
		opts := lbCreateOpts(sp, lb, &hcloud.Network{ID: 1})
		if len(opts.Services) != len(lb.ports) {
			t.Fatalf("%s: services %d, want %d", lb.name, len(opts.Services), len(lb.ports))
		}
		for _, s := range opts.Services {
			if s.Proxyprotocol == nil || s.HealthCheck == nil || s.HealthCheck.Port == nil || *s.HealthCheck.Port != *s.DestinationPort ||
				s.HealthCheck.Interval == nil || s.HealthCheck.Timeout == nil || s.HealthCheck.Retries == nil {
				t.Errorf("%s: service %d lacks proxyprotocol or a full health check: %+v", lb.name, *s.ListenPort, s)
			}
		}
	}
}

func TestLabelsChange(t *testing.T) {
	want := map[string]string{"a": "1", "b": "2"}
	cases := []struct {
		name     string
		have     map[string]string
		owned    []string
		old, new string
	}{
		{"same", map[string]string{"a": "1", "b": "2", "x": "y"}, nil, "", ""},
		{"missing", map[string]string{"a": "1"}, nil, "", "b=2"},
		{"other value", map[string]string{"a": "1", "b": "3"}, nil, "b=3", "b=2"},
		{"owned gone", map[string]string{"a": "1", "b": "2", "c": "true"}, []string{"c"}, "c=true", ""},
		{"foreign kept", map[string]string{"a": "1", "b": "2", "c": "true"}, nil, "", ""},
	}
	for _, c := range cases {
		ch := labelsChange(c.have, want, c.owned...)
		if c.old == "" && c.new == "" {
			if ch != nil {
				t.Errorf("%s: change %v", c.name, ch)
			}
			continue
		}
		if len(ch) != 1 || ch[0].Old != c.old || ch[0].New != c.new {
			t.Errorf("%s: change %v, want %q -> %q", c.name, ch, c.old, c.new)
		}
		merged := mergedLabels(c.have, want, c.owned...)
		if merged["b"] != "2" || (len(c.owned) > 0 && merged[c.owned[0]] != "") {
			t.Errorf("%s: merged %v", c.name, merged)
		}
	}
}

func TestFormatRulesIsOrderIndependent(t *testing.T) {
	cidr := func(s string) net.IPNet {
		_, n, _ := net.ParseCIDR(s)
		return *n
	}
	r := func(port string, src ...net.IPNet) hcloud.FirewallRule {
		return hcloud.FirewallRule{Direction: hcloud.FirewallRuleDirectionIn, Protocol: hcloud.FirewallRuleProtocolTCP, Port: hcloud.Ptr(port), SourceIPs: src}
	}
	a := []hcloud.FirewallRule{r("6443", cidr("::/0"), cidr("0.0.0.0/0")), r("50000", cidr("0.0.0.0/0"))}
	b := []hcloud.FirewallRule{r("50000", cidr("0.0.0.0/0")), r("6443", cidr("0.0.0.0/0"), cidr("::/0"))}
	if formatRules(a) != formatRules(b) {
		t.Errorf("%q != %q", formatRules(a), formatRules(b))
	}
	if c := []hcloud.FirewallRule{r("6443", cidr("203.0.113.7/32")), r("50000", cidr("0.0.0.0/0"))}; formatRules(a) == formatRules(c) {
		t.Error("different sources compare equal")
	}
}

// TestNetworkAndPlacementGroupDrift: labels removed behind ohmytalos'
// back come back; another network range is planned as replace and left
// alone.
func TestNetworkAndPlacementGroupDrift(t *testing.T) {
	t.Parallel()
	w := appliedWorld(t)
	ctx := context.Background()
	c := w.client()
	n, _, err := c.Network.GetByName(ctx, w.Spec.Name)
	if err != nil || n == nil {
		t.Fatalf("network: %v", err)
	}
	if _, _, err := c.Network.Update(ctx, n, hcloud.NetworkUpdateOpts{Labels: map[string]string{}}); err != nil {
		t.Fatal(err)
	}
	pg, _, err := c.PlacementGroup.GetByName(ctx, "demo-worker-1")
	if err != nil || pg == nil {
		t.Fatalf("placement group: %v", err)
	}
	if _, _, err := c.PlacementGroup.Update(ctx, pg, hcloud.PlacementGroupUpdateOpts{Labels: map[string]string{"extra": "kept"}}); err != nil {
		t.Fatal(err)
	}
	if it := w.planOf(t, StepNetwork, "network", w.Spec.Name); it.Action != engine.ActionUpdate || len(it.Changes) != 1 || it.Changes[0].Field != fieldLabels {
		t.Errorf("network plan = %s %v", it.Action, it.Changes)
	}
	if it := w.planOf(t, StepPools, "placement-group", pg.Name); it.Action != engine.ActionUpdate {
		t.Errorf("placement group plan = %s %v", it.Action, it.Changes)
	}
	w.runOnly(t, StepNetwork)
	w.runOnly(t, StepPools)
	if got, _, _ := c.Network.GetByID(ctx, n.ID); got.Labels[cloud.LabelCluster] != w.Spec.Name {
		t.Errorf("network labels = %v", got.Labels)
	}
	if got, _, _ := c.PlacementGroup.GetByID(ctx, pg.ID); got.Labels[cloud.LabelPool] != "worker" || got.Labels["extra"] != "kept" {
		t.Errorf("placement group labels = %v", got.Labels)
	}

	w.Spec.Network.CIDR = "10.1.0.0/16"
	it := w.planOf(t, StepNetwork, "network", w.Spec.Name)
	if it.Action != engine.ActionReplace || it.Changes[0].Field != fieldIPRange || it.Changes[0].Old != "10.0.0.0/16" {
		t.Errorf("plan after a new range = %s %v", it.Action, it.Changes)
	}
}

// actionDone checks an hcloud-go call that answers with an action: the
// call succeeds and the action finishes, else the test fails.
func actionDone(t *testing.T, ctx context.Context, c *hcloud.Client) func(*hcloud.Action, *hcloud.Response, error) {
	return func(a *hcloud.Action, _ *hcloud.Response, err error) {
		t.Helper()
		if err == nil {
			err = c.Action.WaitFor(ctx, a)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
}
