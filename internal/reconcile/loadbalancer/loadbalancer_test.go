package loadbalancer

import (
	"context"
	"errors"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/hetznercloud/hcloud-go/v2/hcloud"

	"github.com/ohmytalos/ohmytalos/internal/reconcile/reconciletest"
)

const target = "cluster=demo,ingress=true"

func want() Want {
	return Want{Name: "demo-ingress", Labels: map[string]string{"cluster": "demo", "role": "ingress"}, Type: "lb11", Location: "fsn1",
		Target: target, Ports: []int{80, 443}, Network: &hcloud.Network{ID: 7, Name: "demo"}}
}

// asWanted is a load balancer exactly as want() describes.
func asWanted() *hcloud.LoadBalancer {
	w := want()
	return &hcloud.LoadBalancer{ID: 1, Name: w.Name, Labels: map[string]string{"cluster": "demo", "role": "ingress", "owner": "someone"},
		LoadBalancerType: &hcloud.LoadBalancerType{Name: "lb11"}, Location: &hcloud.Location{Name: "fsn1"},
		Services:   []hcloud.LoadBalancerService{WantService(80), WantService(443)},
		Targets:    []hcloud.LoadBalancerTarget{{Type: hcloud.LoadBalancerTargetTypeLabelSelector, LabelSelector: &hcloud.LoadBalancerTargetLabelSelector{Selector: target}, UsePrivateIP: true}},
		PrivateNet: []hcloud.LoadBalancerPrivateNet{{Network: &hcloud.Network{ID: 7}}}}
}

// drifted differs from want() in everything that changes in place.
func drifted() *hcloud.LoadBalancer {
	lb := asWanted()
	lb.LoadBalancerType = &hcloud.LoadBalancerType{Name: "lb21"}
	slow := WantService(80)
	slow.HealthCheck.Interval *= 2
	lb.Services = []hcloud.LoadBalancerService{WantService(8080), slow}
	lb.Targets[0].UsePrivateIP = false
	lb.PrivateNet = nil
	lb.Labels = map[string]string{"cluster": "demo", "owner": "someone"}
	return lb
}

func TestPlanAsWantedIsEmpty(t *testing.T) {
	d := New(newFake(), nil, nil).Plan(asWanted(), want())
	if !d.Empty() || d.InPlace() {
		t.Fatalf("diff of a load balancer as wanted = %+v, want none", d)
	}
}

func TestPlanIsTyped(t *testing.T) {
	d := New(newFake(), nil, nil).Plan(drifted(), want())
	if d.Type != "lb11" || d.Location != "" || d.Network == nil || d.Network.ID != 7 {
		t.Errorf("type %q, location %q, network %v", d.Type, d.Location, d.Network)
	}
	wantSvc := ServiceDiff{Add: []int{443}, Update: []int{80}, Delete: []int{8080}}
	if !reflect.DeepEqual(d.Services, wantSvc) {
		t.Errorf("services = %+v, want %+v", d.Services, wantSvc)
	}
	if d.Targets.Add != target || !slices.Equal(d.Targets.Remove, []string{target}) {
		t.Errorf("targets = %+v, want the public target replaced", d.Targets)
	}
	if !slices.Equal(d.Labels.Keys, []string{"role"}) || d.Labels.Want["role"] != "ingress" {
		t.Errorf("labels = %+v, want role set", d.Labels)
	}
	ops := d.Services.Ops(want().Ports)
	wantOps := []ServiceOp{{80, OpUpdate}, {443, OpAdd}, {8080, OpDelete}}
	if !slices.Equal(ops, wantOps) {
		t.Errorf("ops = %v, want %v (spec order, then deletes)", ops, wantOps)
	}
}

func TestReconcileMakesTheDiffInOrder(t *testing.T) {
	lb := drifted()
	f, acts := newFake(lb), &reconciletest.Actions{}
	s := New(f, acts, nil)
	if err := s.Reconcile(context.Background(), lb, want(), s.Plan(lb, want())); err != nil {
		t.Fatal(err)
	}
	wantCalls := []string{"change type lb11", "attach network 7", "update service 80", "add service 443", "delete service 8080",
		"remove target " + target, "add target " + target, "update labels"}
	if !slices.Equal(f.calls, wantCalls) {
		t.Fatalf("calls = %q\nwant    %q", f.calls, wantCalls)
	}
	if len(acts.Waited) != len(wantCalls)-1 {
		t.Errorf("waited for %d actions, want one per call but the labels' update (%d)", len(acts.Waited), len(wantCalls)-1)
	}
	if d := s.Plan(lb, want()); !d.Empty() {
		t.Errorf("after reconcile the diff is %+v, want none", d)
	}
	if lb.Labels["owner"] != "someone" {
		t.Errorf("labels = %v: a label someone else set must stay", lb.Labels)
	}
}

func TestReconcileLeavesLocation(t *testing.T) {
	lb := asWanted()
	lb.Location = &hcloud.Location{Name: "nbg1"}
	f := newFake(lb)
	s := New(f, &reconciletest.Actions{}, nil)
	d := s.Plan(lb, want())
	if d.Location != "fsn1" || d.InPlace() || d.Empty() {
		t.Fatalf("diff = %+v, want only a location that needs a new load balancer", d)
	}
	if err := s.Reconcile(context.Background(), lb, want(), d); err != nil || len(f.calls) != 0 {
		t.Fatalf("reconcile made %q (%v), want no call", f.calls, err)
	}
}

func TestReconcileRetriesAndNamesTheCall(t *testing.T) {
	lb := asWanted()
	lb.LoadBalancerType = &hcloud.LoadBalancerType{Name: "lb21"}
	locked := hcloud.Error{Code: hcloud.ErrorCodeLocked, Message: "locked"}
	f := newFake(lb)
	f.fail["change type lb11"] = locked
	tries := 0
	retry := reconciletest.RetryLocked(&tries)
	s := New(f, &reconciletest.Actions{}, retry)
	if err := s.Reconcile(context.Background(), lb, want(), s.Plan(lb, want())); err != nil || tries != 2 {
		t.Fatalf("reconcile: %v after %d tries, want success on the second", err, tries)
	}

	f.fail["update service 80"] = errors.New("boom")
	lb.Services[0].HealthCheck.Retries = 9
	err := New(f, &reconciletest.Actions{}, nil).Reconcile(context.Background(), lb, want(), s.Plan(lb, want()))
	if err == nil || err.Error() != "set the service on port 80 of load balancer demo-ingress: boom" {
		t.Fatalf("error = %v, want it to name the port and the load balancer", err)
	}
}

func TestCreateReturnsItsAction(t *testing.T) {
	f := newFake()
	got, err := New(f, nil, nil).Create(context.Background(), want())
	if err != nil {
		t.Fatal(err)
	}
	if got.LoadBalancer == nil || got.LoadBalancer.Name != "demo-ingress" || got.Action == nil || got.Action.ID == 0 {
		t.Fatalf("created = %+v, want the load balancer and its action", got)
	}
	opts := CreateOpts(want())
	if len(opts.Services) != 2 || len(opts.Targets) != 1 || !*opts.Targets[0].UsePrivateIP || opts.Network.ID != 7 {
		t.Errorf("create opts = %+v", opts)
	}
	f.fail["create"] = errors.New("boom")
	if _, err := New(f, nil, nil).Create(context.Background(), want()); err == nil || err.Error() != "create load balancer demo-ingress: boom" {
		t.Errorf("error = %v", err)
	}
}

func TestListPassesTheSelector(t *testing.T) {
	f := newFake(asWanted())
	got, err := New(f, nil, nil).List(context.Background(), "cluster=demo")
	if err != nil || len(got) != 1 || !slices.Equal(f.selectors, []string{"cluster=demo"}) {
		t.Fatalf("list = %v, %v, selectors %q", got, err, f.selectors)
	}
}

// handedOver is want() with the services and targets owned by the cloud
// controller of the Traefik Service.
func handedOver() Want {
	w := want()
	w.ServicesBy = "traefik/traefik"
	return w
}

// ccmManaged is the load balancer as the cloud controller leaves it: its
// own service-uid label, services on the Service's node ports and one
// server target per node.
func ccmManaged() *hcloud.LoadBalancer {
	lb := asWanted()
	lb.Labels["hcloud-ccm/service-uid"] = "3f0c"
	svc := WantService(80)
	svc.DestinationPort, svc.HealthCheck.Port = 31080, 31080
	lb.Services = []hcloud.LoadBalancerService{svc}
	lb.Targets = []hcloud.LoadBalancerTarget{{Type: hcloud.LoadBalancerTargetTypeServer, Server: &hcloud.LoadBalancerTargetServer{Server: &hcloud.Server{ID: 12}}, UsePrivateIP: true}}
	return lb
}

func TestHandedOverCreateSendsNoServicesOrTargets(t *testing.T) {
	opts := CreateOpts(handedOver())
	if len(opts.Services) != 0 || len(opts.Targets) != 0 {
		t.Fatalf("create request of a handed-over load balancer: services %v, targets %v; want none", opts.Services, opts.Targets)
	}
	if opts.Name != "demo-ingress" || opts.Network == nil || opts.Location.Name != "fsn1" || opts.LoadBalancerType.Name != "lb11" {
		t.Errorf("create request lacks what ohmytalos keeps owning: %+v", opts)
	}
	if managed := CreateOpts(want()); len(managed.Services) != 2 || len(managed.Targets) != 1 {
		t.Errorf("a managed load balancer must keep its services and target: %+v", managed)
	}
}

func TestHandedOverIgnoresTheControllersServicesAndTargets(t *testing.T) {
	d := New(newFake(), nil, nil).Plan(ccmManaged(), handedOver())
	if !d.Empty() {
		t.Fatalf("diff of a load balancer the cloud controller manages = %+v, want none", d)
	}
	if d := New(newFake(), nil, nil).Plan(ccmManaged(), want()); d.Services.Empty() || d.Targets.Empty() {
		t.Errorf("with ohmytalos owning them, the controller's services and targets are drift: %+v", d)
	}
}

func TestHandedOverStillOwnsTypeNetworkAndLabels(t *testing.T) {
	f := newFake()
	lb := drifted()
	d := New(f, &reconciletest.Actions{}, nil).Plan(lb, handedOver())
	if d.Type != "lb11" || d.Network == nil || d.Labels.Empty() {
		t.Fatalf("diff = %+v, want type, network and labels", d)
	}
	if !d.Services.Empty() || d.Targets.Add != "" {
		t.Fatalf("diff = %+v, want no service change and no target added", d)
	}
	if err := New(f, &reconciletest.Actions{}, nil).Reconcile(context.Background(), lb, handedOver(), d); err != nil {
		t.Fatal(err)
	}
	for _, c := range f.calls {
		if strings.Contains(c, "service") || (strings.Contains(c, "target") && c != "remove target "+target) {
			t.Errorf("reconcile of a handed-over load balancer called %q", c)
		}
	}
	if !slices.Contains(f.calls, "change type lb11") || !slices.Contains(f.calls, "attach network 7") || !slices.Contains(f.calls, "update labels") {
		t.Errorf("calls = %v, want the type, network and labels reconciled", f.calls)
	}
}

// Switching the ingress on hands over a load balancer ohmytalos owned
// whole: its own label-selector target goes, nothing else of the
// services and targets is touched.
func TestHandOverRemovesOurSelectorTarget(t *testing.T) {
	f := newFake()
	lb := asWanted()
	d := New(f, &reconciletest.Actions{}, nil).Plan(lb, handedOver())
	if !slices.Equal(d.Targets.Remove, []string{target}) || d.Targets.Add != "" || !d.Services.Empty() {
		t.Fatalf("diff = %+v, want our selector target removed and nothing else", d)
	}
	if err := New(f, &reconciletest.Actions{}, nil).Reconcile(context.Background(), lb, handedOver(), d); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(f.calls, []string{"remove target " + target}) {
		t.Errorf("calls = %v, want only our target removed", f.calls)
	}
}
