package volume

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/hetznercloud/hcloud-go/v2/hcloud"

	"github.com/ohmytalos/ohmytalos/internal/reconcile/reconciletest"
)

// fakeClient is an in-memory Client: it keeps volumes by ID, refuses to
// shrink one as Hetzner does, and records each call; the HTTP sandbox
// covers the wire.
// store keeps the fake's volumes by ID.
type store = reconciletest.Store[*hcloud.Volume, hcloud.VolumeListOpts]

type fakeClient struct {
	store
	calls []string
	fail  error
}

func (f *fakeClient) Create(_ context.Context, opts hcloud.VolumeCreateOpts) (hcloud.VolumeCreateResult, *hcloud.Response, error) {
	f.calls = append(f.calls, "create")
	if f.fail != nil {
		return hcloud.VolumeCreateResult{}, nil, f.fail
	}
	v := &hcloud.Volume{ID: int64(len(f.store) + 1), Name: opts.Name, Size: opts.Size, Location: opts.Location, Labels: opts.Labels}
	f.store[v.ID] = v
	return hcloud.VolumeCreateResult{Volume: v, Action: &hcloud.Action{ID: 9}}, nil, nil
}

func (f *fakeClient) Update(_ context.Context, v *hcloud.Volume, opts hcloud.VolumeUpdateOpts) (*hcloud.Volume, *hcloud.Response, error) {
	f.calls = append(f.calls, "update labels")
	v.Labels = opts.Labels
	return v, nil, nil
}

func (f *fakeClient) Resize(_ context.Context, v *hcloud.Volume, size int) (*hcloud.Action, *hcloud.Response, error) {
	if size < v.Size {
		return nil, nil, hcloud.Error{Code: hcloud.ErrorCodeInvalidInput, Message: "volumes can only be resized up"}
	}
	f.calls = append(f.calls, "resize")
	v.Size = size
	return &hcloud.Action{ID: 1}, nil, nil
}

var want = Want{Node: "demo-worker-1", Size: 20, Location: "fsn1", Labels: map[string]string{"cluster": "demo"}}

func TestCreateReturnsItsAction(t *testing.T) {
	f := &fakeClient{store: store{}}
	r, err := New(f, nil).Create(context.Background(), want)
	if err != nil || r.Volume.Name != "demo-worker-1-data" || r.Action == nil || r.Action.ID != 9 {
		t.Fatalf("created %+v, %v", r, err)
	}
	f.fail = errors.New("boom")
	if _, err := New(f, nil).Create(context.Background(), want); err == nil || err.Error() != "create volume for demo-worker-1: boom" {
		t.Errorf("error = %v", err)
	}
}

func TestGrowInPlaceShrinkNot(t *testing.T) {
	v := &hcloud.Volume{ID: 1, Name: "demo-worker-1-data", Size: 10, Location: &hcloud.Location{Name: "fsn1"}}
	f, acts := &fakeClient{store: store{1: v}}, &reconciletest.Actions{}
	s := New(f, acts)
	d := s.Plan(v, want)
	if d.Grow != 20 || d.Shrink != 0 || !d.InPlace() {
		t.Fatalf("diff = %+v, want a resize to 20 GB", d)
	}
	if err := s.Reconcile(context.Background(), v, want, d); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(f.calls, []string{"resize", "update labels"}) || len(acts.Waited) != 1 || s.Plan(v, want).InPlace() {
		t.Fatalf("calls %q, waited %d", f.calls, len(acts.Waited))
	}
	smaller := want
	smaller.Size = 10
	d = s.Plan(v, smaller)
	if d.Shrink != 10 || d.Grow != 0 || d.InPlace() {
		t.Fatalf("diff = %+v, want a shrink reported, nothing in place", d)
	}
	f.calls = nil
	if err := s.Reconcile(context.Background(), v, smaller, d); err != nil || len(f.calls) != 0 {
		t.Fatalf("reconcile of a shrink made %q (%v), want no call", f.calls, err)
	}
	moved := want
	moved.Location = "nbg1"
	if d := s.Plan(v, moved); d.Location != "nbg1" || d.InPlace() {
		t.Errorf("diff = %+v, want only the location", d)
	}
}
