package loadbalancer

import (
	"context"
	"errors"
	"reflect"
	"slices"
	"testing"

	"github.com/hetznercloud/hcloud-go/v2/hcloud"
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
	f, acts := newFake(lb), &fakeActions{}
	s := New(f, acts, nil)
	if err := s.Reconcile(context.Background(), lb, want(), s.Plan(lb, want())); err != nil {
		t.Fatal(err)
	}
	wantCalls := []string{"change type lb11", "attach network 7", "update service 80", "add service 443", "delete service 8080",
		"remove target " + target, "add target " + target, "update labels"}
	if !slices.Equal(f.calls, wantCalls) {
		t.Fatalf("calls = %q\nwant    %q", f.calls, wantCalls)
	}
	if len(acts.waited) != len(wantCalls)-1 {
		t.Errorf("waited for %d actions, want one per call but the labels' update (%d)", len(acts.waited), len(wantCalls)-1)
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
	s := New(f, &fakeActions{}, nil)
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
	retry := func(_ context.Context, fn func() error) error {
		for {
			tries++
			if err := fn(); !hcloud.IsError(err, hcloud.ErrorCodeLocked) {
				return err
			}
		}
	}
	s := New(f, &fakeActions{}, retry)
	if err := s.Reconcile(context.Background(), lb, want(), s.Plan(lb, want())); err != nil || tries != 2 {
		t.Fatalf("reconcile: %v after %d tries, want success on the second", err, tries)
	}

	f.fail["update service 80"] = errors.New("boom")
	lb.Services[0].HealthCheck.Retries = 9
	err := New(f, &fakeActions{}, nil).Reconcile(context.Background(), lb, want(), s.Plan(lb, want()))
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
