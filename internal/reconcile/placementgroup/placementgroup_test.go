package placementgroup

import (
	"context"
	"errors"
	"testing"

	"github.com/hetznercloud/hcloud-go/v2/hcloud"

	"github.com/ohmytalos/ohmytalos/internal/reconcile/reconciletest"
)

// fakeClient is an in-memory Client that keeps placement groups by ID
// and counts updates; the HTTP sandbox covers the wire.
// store keeps the fake's placement groups by ID.
type store = reconciletest.Store[*hcloud.PlacementGroup, hcloud.PlacementGroupListOpts]

type fakeClient struct {
	store
	updates int
	err     error
}

func (f *fakeClient) Create(_ context.Context, opts hcloud.PlacementGroupCreateOpts) (hcloud.PlacementGroupCreateResult, *hcloud.Response, error) {
	if f.err != nil {
		return hcloud.PlacementGroupCreateResult{}, nil, f.err
	}
	pg := &hcloud.PlacementGroup{ID: int64(len(f.store) + 1), Name: opts.Name, Labels: opts.Labels, Type: opts.Type}
	f.store[pg.ID] = pg
	return hcloud.PlacementGroupCreateResult{PlacementGroup: pg}, nil, nil
}

func (f *fakeClient) Update(_ context.Context, pg *hcloud.PlacementGroup, opts hcloud.PlacementGroupUpdateOpts) (*hcloud.PlacementGroup, *hcloud.Response, error) {
	f.updates++
	if f.err != nil {
		return nil, nil, f.err
	}
	cp := *pg
	cp.Labels = opts.Labels
	f.store[pg.ID] = &cp
	return &cp, nil, nil
}

var want = Want{Name: "demo-cp-0", Labels: map[string]string{"cluster": "demo", "pool": "cp"}}

func TestCreateIsSpreadAndAsWanted(t *testing.T) {
	f := &fakeClient{store: store{}}
	s := New(f)
	pg, err := s.Create(context.Background(), want)
	if err != nil || pg.Type != hcloud.PlacementGroupTypeSpread {
		t.Fatalf("created %+v, %v; want a spread group", pg, err)
	}
	if d := s.Plan(pg, want); d.InPlace() || d.Type != "" {
		t.Errorf("diff after create = %+v, want none", d)
	}
	got, err := s.Reconcile(context.Background(), pg, want, s.Plan(pg, want))
	if err != nil || got != pg || f.updates != 0 {
		t.Errorf("reconcile with nothing to do made %d updates (%v)", f.updates, err)
	}
}

func TestLabelsChangeInPlaceTypeDoesNot(t *testing.T) {
	pg := &hcloud.PlacementGroup{ID: 1, Name: "demo-cp-0", Type: "cluster", Labels: map[string]string{"cluster": "demo", "owner": "someone"}}
	f := &fakeClient{store: store{1: pg}}
	s := New(f)
	d := s.Plan(pg, want)
	if d.Type != hcloud.PlacementGroupTypeSpread || !d.InPlace() {
		t.Fatalf("diff = %+v, want the type reported and the labels in place", d)
	}
	got, err := s.Reconcile(context.Background(), pg, want, d)
	if err != nil || f.updates != 1 || got.Labels["pool"] != "cp" || got.Labels["owner"] != "someone" {
		t.Fatalf("reconcile = %+v, %v after %d updates", got, err, f.updates)
	}
	if d := s.Plan(got, want); d.InPlace() {
		t.Errorf("labels still differ: %+v", d)
	}
	f.err = errors.New("boom")
	pg.Labels = nil
	if _, err := s.Reconcile(context.Background(), pg, want, s.Plan(pg, want)); err == nil || err.Error() != "set the labels of placement group demo-cp-0: boom" {
		t.Errorf("error = %v", err)
	}
}
