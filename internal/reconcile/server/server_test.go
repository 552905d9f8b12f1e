package server

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/hetznercloud/hcloud-go/v2/hcloud"

	"github.com/ohmytalos/ohmytalos/internal/reconcile/reconciletest"
)

// fakeClient is an in-memory Client: it moves a server between placement
// groups only while it is off, as Hetzner does, and records each call;
// the HTTP sandbox covers the wire.
type fakeClient struct {
	calls []string
	fail  map[string]error
	reconciletest.Store[*hcloud.Server, hcloud.ServerListOpts]
}

func (f *fakeClient) call(name string) error {
	return reconciletest.Record(&f.calls, f.fail, name)
}

func (f *fakeClient) Update(_ context.Context, sv *hcloud.Server, opts hcloud.ServerUpdateOpts) (*hcloud.Server, *hcloud.Response, error) {
	if err := f.call("update labels"); err != nil {
		return nil, nil, err
	}
	cp := *sv
	cp.Labels = opts.Labels
	return &cp, nil, nil
}

func (f *fakeClient) AddToPlacementGroup(_ context.Context, sv *hcloud.Server, pg *hcloud.PlacementGroup) (*hcloud.Action, *hcloud.Response, error) {
	if sv.Status != hcloud.ServerStatusOff {
		return nil, nil, hcloud.Error{Code: hcloud.ErrorCodeServerNotStopped, Message: "server must be stopped"}
	}
	if err := f.call("add to group"); err != nil {
		return nil, nil, err
	}
	sv.PlacementGroup = pg
	return &hcloud.Action{ID: 1}, nil, nil
}

func (f *fakeClient) RemoveFromPlacementGroup(_ context.Context, sv *hcloud.Server) (*hcloud.Action, *hcloud.Response, error) {
	if err := f.call("remove from group"); err != nil {
		return nil, nil, err
	}
	sv.PlacementGroup = nil
	return &hcloud.Action{ID: 2}, nil, nil
}

func want() Want {
	return Want{ServerType: "cx22", Location: "fsn1", PlacementGroup: &hcloud.PlacementGroup{ID: 5, Name: "demo-cp-0"},
		Network: &hcloud.Network{ID: 7, Name: "demo"}, Labels: map[string]string{"cluster": "demo"}, Owned: []string{"ingress"}}
}

func live(status hcloud.ServerStatus) *hcloud.Server {
	return &hcloud.Server{ID: 1, Name: "demo-cp-1", Status: status, ServerType: &hcloud.ServerType{Name: "cx22"},
		Location: &hcloud.Location{Name: "fsn1"}, PlacementGroup: &hcloud.PlacementGroup{ID: 4, Name: "old"},
		PrivateNet: []hcloud.ServerPrivateNet{{Network: &hcloud.Network{ID: 7}}}, Labels: map[string]string{"cluster": "demo", "ingress": "true"}}
}

func TestRunningServerIsNotMoved(t *testing.T) {
	sv := live(hcloud.ServerStatusRunning)
	f := &fakeClient{}
	s := New(f, &reconciletest.Actions{}, nil)
	d := s.Plan(sv, want())
	if d.PlacementGroup == nil || d.MoveInPlace || d.Stopped || d.Detached || !slices.Equal(d.Labels.Keys, []string{"ingress"}) {
		t.Fatalf("diff = %+v, want a group move reported and the owned ingress label dropped", d)
	}
	got, err := s.Reconcile(context.Background(), sv, want(), d)
	if err != nil || !slices.Equal(f.calls, []string{"update labels"}) || got.Labels["ingress"] != "" {
		t.Fatalf("reconcile: %+v, %v, calls %q", got, err, f.calls)
	}
}

func TestStoppedServerMovesWithRetries(t *testing.T) {
	sv := live(hcloud.ServerStatusOff)
	f := &fakeClient{fail: map[string]error{"remove from group": hcloud.Error{Code: hcloud.ErrorCodeLocked, Message: "locked"}}}
	tries := 0
	retry := reconciletest.RetryLocked(&tries)
	acts := &reconciletest.Actions{}
	s := New(f, acts, retry)
	w := want()
	w.Labels = sv.Labels
	w.Owned = nil
	d := s.Plan(sv, w)
	if !d.MoveInPlace || !d.Stopped || !d.Labels.Empty() {
		t.Fatalf("diff = %+v, want a move in place of a stopped server", d)
	}
	if _, err := s.Reconcile(context.Background(), sv, w, d); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(f.calls, []string{"remove from group", "remove from group", "add to group"}) || len(acts.Waited) != 2 || sv.PlacementGroup.ID != 5 {
		t.Fatalf("calls %q, waited %d, group %+v", f.calls, len(acts.Waited), sv.PlacementGroup)
	}
	f.fail["add to group"] = errors.New("boom")
	sv.PlacementGroup = nil
	if _, err := s.Reconcile(context.Background(), sv, w, s.Plan(sv, w)); err == nil || err.Error() != "add to its placement group server demo-cp-1: boom" {
		t.Errorf("error = %v", err)
	}
}

func TestOtherTypeLocationAndNetwork(t *testing.T) {
	sv := live(hcloud.ServerStatusRunning)
	sv.ServerType = &hcloud.ServerType{Name: "cx32"}
	sv.Location = &hcloud.Location{Name: "nbg1"}
	sv.PrivateNet = nil
	d := New(&fakeClient{}, nil, nil).Plan(sv, want())
	if d.ServerType != "cx22" || d.Location != "fsn1" || !d.Detached {
		t.Fatalf("diff = %+v, want type, location and network reported", d)
	}
}
