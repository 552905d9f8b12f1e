package steps

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/hetznercloud/hcloud-go/v2/hcloud"

	"github.com/ohmytalos/ohmytalos/internal/engine"
	"github.com/ohmytalos/ohmytalos/internal/spec"
)

// poolsWorld runs the secrets, network and pools steps of the seed spec
// after mutate: the load balancers exist, no server does.
func poolsWorld(t *testing.T, mutate func(*spec.Spec)) *world {
	t.Helper()
	w := newWorld(t, "../examples/seed.yaml")
	w.Spec.Firewall.Allow = []string{"0.0.0.0/0", "::/0"}
	if mutate != nil {
		mutate(w.Spec)
	}
	for _, st := range []engine.StepName{StepSecrets, StepNetwork, StepPools} {
		w.runOnly(t, st)
	}
	return w
}

func (w *world) ingressLB(t *testing.T) *hcloud.LoadBalancer {
	t.Helper()
	lb, _, err := w.client().LoadBalancer.GetByName(context.Background(), w.Spec.Name+"-ingress")
	if err != nil || lb == nil {
		t.Fatalf("ingress load balancer: %v, %v", lb, err)
	}
	return lb
}

// TestIngressLoadBalancerIsHandedOver is issue 20 item 2: with the
// ingress on (the seed's default), ohmytalos creates the load balancer
// without services and targets and leaves what the cloud controller
// sets on them alone: a second apply changes nothing, also after the
// controller changed its services and labelled it.
func TestIngressLoadBalancerIsHandedOver(t *testing.T) {
	t.Parallel()
	w := poolsWorld(t, nil)
	ctx := context.Background()
	c := w.client()
	lb := w.ingressLB(t)
	if len(lb.Services) != 0 || len(lb.Targets) != 0 {
		t.Fatalf("handed-over load balancer created with services %v and targets %v, want none", lb.Services, lb.Targets)
	}
	if len(lb.PrivateNet) != 1 || lb.Location.Name != w.Spec.LoadBalancer.Location || lb.LoadBalancerType.Name != "lb11" {
		t.Errorf("the load balancer lacks what ohmytalos keeps owning: network %v, location %s, type %s", lb.PrivateNet, lb.Location.Name, lb.LoadBalancerType.Name)
	}
	it := w.planOf(t, StepPools, "load-balancer", lb.Name)
	if it.Action != engine.ActionReuse || !strings.Contains(it.Detail, "services and targets: managed by the cloud controller for Service traefik/traefik") {
		t.Fatalf("plan = %s %q %v", it.Action, it.Detail, it.Changes)
	}

	// What the cloud controller does when it adopts the load balancer for
	// Service traefik/traefik: its label, services on the node ports.
	labels := map[string]string{"hcloud-ccm/service-uid": "3f0c9a"}
	for k, v := range lb.Labels {
		labels[k] = v
	}
	if _, _, err := c.LoadBalancer.Update(ctx, lb, hcloud.LoadBalancerUpdateOpts{Labels: labels}); err != nil {
		t.Fatal(err)
	}
	for _, p := range [][2]int{{80, 31080}, {443, 31443}} {
		a, _, err := c.LoadBalancer.AddService(ctx, lb, hcloud.LoadBalancerAddServiceOpts{Protocol: hcloud.LoadBalancerServiceProtocolTCP,
			ListenPort: hcloud.Ptr(p[0]), DestinationPort: hcloud.Ptr(p[1]), Proxyprotocol: hcloud.Ptr(false),
			HealthCheck: &hcloud.LoadBalancerAddServiceOptsHealthCheck{Protocol: hcloud.LoadBalancerServiceProtocolTCP, Port: hcloud.Ptr(p[1]),
				Interval: hcloud.Ptr(healthInterval), Timeout: hcloud.Ptr(healthTimeout), Retries: hcloud.Ptr(healthRetries)}})
		if err == nil {
			err = c.Action.WaitFor(ctx, a)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	before := w.ingressLB(t)
	if it := w.planOf(t, StepPools, "load-balancer", lb.Name); it.Action != engine.ActionReuse {
		t.Fatalf("after the cloud controller's changes the plan is %s %v, want reuse", it.Action, it.Changes)
	}
	evs := w.runOnly(t, StepPools)
	after := w.ingressLB(t)
	if !slices.EqualFunc(before.Services, after.Services, func(a, b hcloud.LoadBalancerService) bool { return formatService(a) == formatService(b) }) {
		t.Errorf("a second apply changed the controller's services: %v -> %v", before.Services, after.Services)
	}
	if after.Labels["hcloud-ccm/service-uid"] != "3f0c9a" {
		t.Errorf("a second apply dropped the controller's label: %v", after.Labels)
	}
	if hasEvent(evs, engine.KindResource, engine.ActionUpdate, "load-balancer/"+lb.Name) {
		t.Errorf("a second apply updated the load balancer: %v", evs)
	}
}

// TestIngressOffKeepsTodaysLoadBalancer: addons.ingress.enabled false
// gives the load balancer ohmytalos owns whole, and plan says nothing
// answers behind it.
func TestIngressOffKeepsTodaysLoadBalancer(t *testing.T) {
	t.Parallel()
	w := poolsWorld(t, func(sp *spec.Spec) {
		off := false
		sp.Addons.Ingress.Enabled = &off
	})
	lb := w.ingressLB(t)
	if len(lb.Services) != 2 || len(lb.Targets) != 1 {
		t.Fatalf("services %v targets %v, want 80, 443 and the label selector", lb.Services, lb.Targets)
	}
	p := w.planStep(t, StepPools)
	if !slices.ContainsFunc(p.Notes, func(n string) bool {
		return strings.HasPrefix(n, "nothing answers behind load balancer demo-ingress until an ingress runs")
	}) {
		t.Errorf("plan notes %q lack the warning that nothing answers", p.Notes)
	}
}

// TestPlanListsTheDNSRecords is issue 20 item 3: with domains, plan
// lists the A and AAAA records with the load balancer's addresses.
func TestPlanListsTheDNSRecords(t *testing.T) {
	t.Parallel()
	w := poolsWorld(t, nil)
	w.Spec.Domains = []string{"app.example.com"}
	lb := w.ingressLB(t)
	notes := w.planStep(t, StepPools).Notes
	want := []string{"DNS: create A app.example.com -> " + lb.PublicNet.IPv4.IP.String(), "DNS: create AAAA app.example.com -> " + lb.PublicNet.IPv6.IP.String()}
	for _, n := range want {
		if !slices.Contains(notes, n) {
			t.Errorf("plan notes %q lack %q", notes, n)
		}
	}
}

func TestIngressNotesWithoutIPv6(t *testing.T) {
	sp := spec.Default("demo")
	sp.Domains = []string{"app.example.com"}
	lb := &hcloud.LoadBalancer{PublicNet: hcloud.LoadBalancerPublicNet{IPv4: hcloud.LoadBalancerPublicNetIPv4{IP: []byte{127, 0, 1, 9}}}}
	notes := ingressNotes(sp, lb)
	if !slices.Contains(notes, "DNS: create A app.example.com -> 127.0.1.9") || slices.ContainsFunc(notes, func(n string) bool { return strings.Contains(n, "create AAAA") }) {
		t.Errorf("notes %q: want an A record and no AAAA for a load balancer without IPv6", notes)
	}
	if fresh := ingressNotes(sp, nil); !slices.ContainsFunc(fresh, func(n string) bool {
		return strings.HasPrefix(n, "DNS: create A app.example.com -> the IPv4 of demo-ingress")
	}) {
		t.Errorf("notes before the load balancer exists: %q", fresh)
	}
}

// TestIngressSwitchedOnHandsOver: a load balancer made with the ingress
// off loses ohmytalos's label-selector target when the ingress is
// switched on, and keeps it handed over afterwards.
func TestIngressSwitchedOnHandsOver(t *testing.T) {
	t.Parallel()
	off := false
	w := poolsWorld(t, func(sp *spec.Spec) { sp.Addons.Ingress.Enabled = &off })
	on := true
	w.Spec.Addons.Ingress.Enabled = &on
	it := w.planOf(t, StepPools, "load-balancer", w.Spec.Name+"-ingress")
	if it.Action != engine.ActionUpdate || len(it.Changes) != 1 || it.Changes[0].Field != fieldTargets ||
		it.Changes[0].New != "managed by the cloud controller for Service traefik/traefik" {
		t.Fatalf("plan = %s %+v, want the target handed over", it.Action, it.Changes)
	}
	w.runOnly(t, StepPools)
	if lb := w.ingressLB(t); len(lb.Targets) != 0 {
		t.Errorf("targets after the handover: %s, want none until the cloud controller adds its own", formatTargets(lb))
	}
	if it := w.planOf(t, StepPools, "load-balancer", w.Spec.Name+"-ingress"); it.Action != engine.ActionReuse {
		t.Errorf("after the handover the plan is %s %v, want reuse", it.Action, it.Changes)
	}
}

// The doctor learns from the live load balancer whether the ingress
// serves IPv6, exactly when the plan lists AAAA records.
func TestDoctorIngressIPv6(t *testing.T) {
	t.Parallel()
	w := poolsWorld(t, nil)
	ctx := context.Background()
	d := []string{"app.example.com"}
	if got := doctorIngressIPv6(ctx, w.client(), w.Spec, nil); got != nil {
		t.Errorf("without domains: %v, want unknown", *got)
	}
	if got := doctorIngressIPv6(ctx, w.client(), w.Spec, d); got == nil || *got {
		t.Errorf("domains given to the doctor only: %v, want false (plan lists no AAAA record)", got)
	}
	w.Spec.Domains = d
	if got := doctorIngressIPv6(ctx, w.client(), w.Spec, d); got == nil || !*got {
		t.Errorf("ingress with a load balancer IPv6 and domains: %v, want true", got)
	}
	off := false
	w.Spec.Addons.Ingress.Enabled = &off
	if got := doctorIngressIPv6(ctx, w.client(), w.Spec, d); got == nil || *got {
		t.Errorf("ingress off: %v, want false", got)
	}
}

// TestAddonsPlanSeesTheIngressIPv6: with domains on a load balancer with
// IPv6, apply's Traefik values serve IPv6 (addonInputs), and plan renders
// the same values, so what an apply recorded plans as reuse, not as an
// upgrade of values that did not change.
func TestAddonsPlanSeesTheIngressIPv6(t *testing.T) {
	t.Parallel()
	w := poolsWorld(t, func(sp *spec.Spec) { sp.Domains = []string{"app.example.com"} })
	ctx, d, env := context.Background(), w.deps(), w.env(t)
	in, err := d.addonInputs(ctx, env)
	if err != nil {
		t.Fatal(err)
	}
	if want := w.ingressLB(t).PublicNet.IPv6.IP.String(); in.IngressLBIPv6 != want {
		t.Fatalf("apply's inputs carry IPv6 %q, want the load balancer's %s", in.IngressLBIPv6, want)
	}
	rels, err := wantedReleases(env.Spec, in)
	if err != nil {
		t.Fatal(err)
	}
	if err := recordReleases(env, rels); err != nil {
		t.Fatal(err)
	}
	p, err := (&Addons{d}).Plan(ctx, env)
	if err != nil {
		t.Fatal(err)
	}
	i := slices.IndexFunc(p.Items, func(it engine.PlanItem) bool { return it.Name == "ingress" })
	if i < 0 {
		t.Fatalf("plan items %+v lack the ingress release", p.Items)
	}
	if it := p.Items[i]; it.Action != engine.ActionReuse {
		t.Errorf("ingress after an apply with IPv6: %s %q %+v, want reuse", it.Action, it.Detail, it.Changes)
	}
}
