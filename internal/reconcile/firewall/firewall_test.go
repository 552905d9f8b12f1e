package firewall

import (
	"context"
	"errors"
	"net"
	"slices"
	"testing"

	"github.com/hetznercloud/hcloud-go/v2/hcloud"

	"github.com/ohmytalos/ohmytalos/internal/reconcile/reconciletest"
)

// fakeClient is an in-memory Client: it keeps firewalls by ID, changes
// them as Hetzner would for the calls the service makes and records each
// call; the HTTP sandbox (internal/sandbox/hcloudfake) covers the wire.
// store keeps the fake's firewalls by ID.
type store = reconciletest.Store[*hcloud.Firewall, hcloud.FirewallListOpts]

type fakeClient struct {
	store
	nextID int64
	calls  []string
	fail   map[string]error
}

func newFake(fws ...*hcloud.Firewall) *fakeClient {
	f := &fakeClient{store: store{}, nextID: 100, fail: map[string]error{}}
	for _, fw := range fws {
		f.store[fw.ID] = fw
	}
	return f
}

func (f *fakeClient) call(name string) ([]*hcloud.Action, error) {
	if err := reconciletest.Record(&f.calls, f.fail, name); err != nil {
		return nil, err
	}
	f.nextID++
	return []*hcloud.Action{{ID: f.nextID}}, nil
}

func (f *fakeClient) Create(_ context.Context, opts hcloud.FirewallCreateOpts) (hcloud.FirewallCreateResult, *hcloud.Response, error) {
	if opts.Rules == nil {
		return hcloud.FirewallCreateResult{}, nil, hcloud.Error{Code: hcloud.ErrorCodeInvalidInput, Message: "rules must be a list"}
	}
	acts, err := f.call("create")
	if err != nil {
		return hcloud.FirewallCreateResult{}, nil, err
	}
	fw := &hcloud.Firewall{ID: f.nextID + 1000, Name: opts.Name, Labels: opts.Labels, Rules: opts.Rules, AppliedTo: opts.ApplyTo}
	f.store[fw.ID] = fw
	return hcloud.FirewallCreateResult{Firewall: fw, Actions: acts}, nil, nil
}

func (f *fakeClient) Update(_ context.Context, fw *hcloud.Firewall, opts hcloud.FirewallUpdateOpts) (*hcloud.Firewall, *hcloud.Response, error) {
	if _, err := f.call("update labels"); err != nil {
		return nil, nil, err
	}
	fw.Labels = opts.Labels
	return fw, nil, nil
}

func (f *fakeClient) SetRules(_ context.Context, fw *hcloud.Firewall, opts hcloud.FirewallSetRulesOpts) ([]*hcloud.Action, *hcloud.Response, error) {
	if opts.Rules == nil {
		return nil, nil, hcloud.Error{Code: hcloud.ErrorCodeInvalidInput, Message: "rules must be a list"}
	}
	acts, err := f.call("set rules")
	return acts, nil, err
}

func (f *fakeClient) ApplyResources(_ context.Context, fw *hcloud.Firewall, res []hcloud.FirewallResource) ([]*hcloud.Action, *hcloud.Response, error) {
	acts, err := f.call("apply to " + res[0].LabelSelector.Selector)
	if err == nil {
		fw.AppliedTo = append(fw.AppliedTo, res...)
	}
	return acts, nil, err
}

func rule(port, cidr string) hcloud.FirewallRule {
	_, n, _ := net.ParseCIDR(cidr)
	return hcloud.FirewallRule{Direction: hcloud.FirewallRuleDirectionIn, Protocol: hcloud.FirewallRuleProtocolTCP, Port: hcloud.Ptr(port), SourceIPs: []net.IPNet{*n}}
}

func want() Want {
	return Want{Name: "demo", Labels: map[string]string{"cluster": "demo"}, Selector: "cluster=demo",
		Rules: []hcloud.FirewallRule{rule("50000", "203.0.113.7/32"), rule("6443", "203.0.113.7/32")}}
}

func TestPlanAndReconcile(t *testing.T) {
	w := want()
	fw := &hcloud.Firewall{ID: 1, Name: "demo", Labels: map[string]string{"owner": "someone"},
		Rules: []hcloud.FirewallRule{rule("6443", "0.0.0.0/0")}}
	f, acts := newFake(fw), &reconciletest.Actions{}
	s := New(f, acts)
	d := s.Plan(fw, w)
	if !d.Rules || d.ApplyTo != "cluster=demo" || !slices.Equal(d.Labels.Keys, []string{"cluster"}) {
		t.Fatalf("diff = %+v, want rules, applied-to and labels", d)
	}
	if err := s.Reconcile(context.Background(), fw, w, d); err != nil {
		t.Fatal(err)
	}
	if wantCalls := []string{"set rules", "apply to cluster=demo", "update labels"}; !slices.Equal(f.calls, wantCalls) {
		t.Fatalf("calls = %q, want %q", f.calls, wantCalls)
	}
	if len(acts.Waited) != 2 {
		t.Errorf("waited for %d actions, want 2", len(acts.Waited))
	}
	if d := s.Plan(fw, w); !d.Empty() {
		t.Errorf("after reconcile the diff is %+v, want none", d)
	}
	if fw.Labels["owner"] != "someone" {
		t.Errorf("labels = %v: a label someone else set must stay", fw.Labels)
	}
}

func TestRuleOrderDoesNotMatter(t *testing.T) {
	w := want()
	fw := &hcloud.Firewall{Name: "demo", Labels: w.Labels, Rules: []hcloud.FirewallRule{w.Rules[1], w.Rules[0]}, AppliedTo: w.applyTo()}
	if d := New(newFake(), nil).Plan(fw, w); !d.Empty() {
		t.Fatalf("diff = %+v, want none for the same rules in another order", d)
	}
}

func TestNoRulesAreSentAsEmptyList(t *testing.T) {
	w := want()
	w.Rules = nil
	f := newFake()
	fw, err := New(f, &reconciletest.Actions{}).Create(context.Background(), w)
	if err != nil || fw == nil {
		t.Fatalf("create with no rules: %v (nil must be sent as [])", err)
	}
	fw.Rules = []hcloud.FirewallRule{rule("6443", "0.0.0.0/0")}
	s := New(f, &reconciletest.Actions{})
	if err := s.Reconcile(context.Background(), fw, w, s.Plan(fw, w)); err != nil {
		t.Fatalf("set no rules: %v", err)
	}
}

func TestErrorsNameTheFirewall(t *testing.T) {
	f := newFake()
	f.fail["create"] = errors.New("boom")
	if _, err := New(f, &reconciletest.Actions{}).Create(context.Background(), want()); err == nil || err.Error() != "create firewall demo: boom" {
		t.Errorf("create error = %v", err)
	}
	fw := &hcloud.Firewall{ID: 1, Name: "demo"}
	f.fail["set rules"] = errors.New("boom")
	s := New(f, &reconciletest.Actions{})
	if err := s.Reconcile(context.Background(), fw, want(), s.Plan(fw, want())); err == nil || err.Error() != "set the rules of firewall demo: boom" {
		t.Errorf("reconcile error = %v", err)
	}
}
