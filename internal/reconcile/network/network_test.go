package network

import (
	"context"
	"errors"
	"net"
	"slices"
	"testing"

	"github.com/hetznercloud/hcloud-go/v2/hcloud"

	"github.com/ohmytalos/ohmytalos/internal/reconcile/reconciletest"
)

// fakeClient is an in-memory Client: it keeps networks by ID, changes
// them as Hetzner would for the calls the service makes and records each
// call; the HTTP sandbox (internal/sandbox/hcloudfake) covers the wire.
// store keeps the fake's networks by ID.
type store = reconciletest.Store[*hcloud.Network, hcloud.NetworkListOpts]

type fakeClient struct {
	store
	calls []string
	fail  map[string]error
}

func newFake(nets ...*hcloud.Network) *fakeClient {
	f := &fakeClient{store: store{}, fail: map[string]error{}}
	for _, n := range nets {
		f.store[n.ID] = n
	}
	return f
}

func (f *fakeClient) call(name string) error {
	return reconciletest.Record(&f.calls, f.fail, name)
}

func (f *fakeClient) Create(_ context.Context, opts hcloud.NetworkCreateOpts) (*hcloud.Network, *hcloud.Response, error) {
	if err := f.call("create"); err != nil {
		return nil, nil, err
	}
	n := &hcloud.Network{ID: int64(len(f.store) + 1), Name: opts.Name, IPRange: opts.IPRange, Subnets: opts.Subnets, Labels: opts.Labels}
	f.store[n.ID] = n
	return n, nil, nil
}

func (f *fakeClient) Update(_ context.Context, n *hcloud.Network, opts hcloud.NetworkUpdateOpts) (*hcloud.Network, *hcloud.Response, error) {
	if err := f.call("update labels"); err != nil {
		return nil, nil, err
	}
	n.Labels = opts.Labels
	return n, nil, nil
}

func (f *fakeClient) AddSubnet(_ context.Context, n *hcloud.Network, opts hcloud.NetworkAddSubnetOpts) (*hcloud.Action, *hcloud.Response, error) {
	if !n.IPRange.Contains(opts.Subnet.IPRange.IP) {
		return nil, nil, hcloud.Error{Code: hcloud.ErrorCodeInvalidInput, Message: "subnet outside the network"}
	}
	if err := f.call("add subnet " + opts.Subnet.IPRange.String()); err != nil {
		return nil, nil, err
	}
	return &hcloud.Action{ID: 1}, nil, nil
}

func want() Want {
	return Want{Name: "demo", Labels: map[string]string{"cluster": "demo"}, IPRange: "10.0.0.0/16", Zone: "eu-central",
		Subnets: []string{"10.0.1.0/24", "10.0.2.0/24", "10.0.3.0/24"}}
}

func cidr(s string) *net.IPNet {
	_, n, _ := net.ParseCIDR(s)
	return n
}

func TestCreateThenNothingToDo(t *testing.T) {
	f := newFake()
	s := New(f, &reconciletest.Actions{})
	n, err := s.Create(context.Background(), want())
	if err != nil {
		t.Fatal(err)
	}
	if len(n.Subnets) != 3 || n.Subnets[0].NetworkZone != "eu-central" || n.Subnets[0].Type != hcloud.NetworkSubnetTypeCloud {
		t.Fatalf("subnets = %+v", n.Subnets)
	}
	if d := s.Plan(n, want()); d.InPlace() || d.IPRange != "" {
		t.Errorf("diff after create = %+v, want none", d)
	}
}

func TestMissingSubnetsAreAddedInOrder(t *testing.T) {
	n := &hcloud.Network{ID: 1, Name: "demo", IPRange: cidr("10.0.0.0/16"), Labels: map[string]string{"owner": "someone"},
		Subnets: []hcloud.NetworkSubnet{{IPRange: cidr("10.0.2.0/24")}}}
	f, acts := newFake(n), &reconciletest.Actions{}
	s := New(f, acts)
	d := s.Plan(n, want())
	if !slices.Equal(d.Subnets, []string{"10.0.1.0/24", "10.0.3.0/24"}) || d.Labels.Empty() || d.IPRange != "" {
		t.Fatalf("diff = %+v, want two subnets and the labels", d)
	}
	if err := s.Reconcile(context.Background(), n, want(), d); err != nil {
		t.Fatal(err)
	}
	if wantCalls := []string{"update labels", "add subnet 10.0.1.0/24", "add subnet 10.0.3.0/24"}; !slices.Equal(f.calls, wantCalls) {
		t.Fatalf("calls = %q, want %q", f.calls, wantCalls)
	}
	if len(acts.Waited) != 2 || s.Plan(n, want()).InPlace() {
		t.Errorf("waited %d, diff after %+v", len(acts.Waited), s.Plan(n, want()))
	}
	if n.Labels["owner"] != "someone" {
		t.Errorf("labels = %v: a label someone else set must stay", n.Labels)
	}
}

func TestOtherRangeNeedsANewNetwork(t *testing.T) {
	n := &hcloud.Network{ID: 1, Name: "demo", IPRange: cidr("10.1.0.0/16"), Labels: want().Labels}
	s := New(newFake(n), &reconciletest.Actions{})
	d := s.Plan(n, want())
	if d.IPRange != "10.0.0.0/16" {
		t.Fatalf("diff = %+v, want the range reported", d)
	}
	d.Subnets = nil
	if d.InPlace() {
		t.Errorf("a range change alone is not in place: %+v", d)
	}
}

func TestErrorsNameTheSubnet(t *testing.T) {
	n := &hcloud.Network{ID: 1, Name: "demo", IPRange: cidr("10.0.0.0/16"), Labels: want().Labels}
	f := newFake(n)
	f.fail["add subnet 10.0.1.0/24"] = errors.New("boom")
	s := New(f, &reconciletest.Actions{})
	err := s.Reconcile(context.Background(), n, want(), s.Plan(n, want()))
	if err == nil || err.Error() != "add subnet 10.0.1.0/24 to network demo: boom" {
		t.Fatalf("error = %v", err)
	}
	w := want()
	w.IPRange = "10.0.0.0"
	if _, err := s.Create(context.Background(), w); err == nil {
		t.Error("create with a range that is no CIDR: want an error naming network.cidr")
	}
}
