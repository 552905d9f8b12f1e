package reconcile

import (
	"context"
	"fmt"

	"github.com/hetznercloud/hcloud-go/v2/hcloud"

	"github.com/ohmytalos/ohmytalos/internal/cloud"
)

// Lookup is the two calls of an hcloud-go resource client (such as
// hcloud.ILoadBalancerClient) that find its resources: T is the resource,
// O its list options.
type Lookup[T any, O any] interface {
	GetByID(ctx context.Context, id int64) (T, *hcloud.Response, error)
	AllWithOpts(ctx context.Context, opts O) ([]T, error)
}

// Meta is what finding reads of a resource: its ID, name and labels.
type Meta struct {
	ID     int64
	Name   string
	Labels map[string]string
}

// Owner decides which resources found by their labels are the cluster's:
// a match with the cluster's name but not its ID is another checkout's,
// never adopted.
type Owner interface {
	// Owns reports whether labels carry this cluster's ID.
	Owns(labels map[string]string) bool
	// Foreign is the error for matches that carry the cluster's name but
	// not its ID (names as "name (id)", labels one match's).
	Foreign(kind string, names []string, labels map[string]string) error
}

// Query says how to find one resource: by its stored ID first, else by
// Selector (the wanted labels without the cluster ID), keeping what
// Owner owns.
type Query struct {
	ID       int64 // 0: none stored
	Selector string
	Owner    Owner
}

// Finder finds resources of one kind by ID and by label selector, after
// cluster-api-provider-hetzner's findServer (syself/cluster-api-provider-hetzner,
// pkg/services/hcloud/server/server.go): by the stored ID, else by labels,
// two matches being an error. Each service embeds one.
type Finder[T comparable, O any] struct {
	kind   string
	lookup Lookup[T, O]
	opts   func(hcloud.ListOpts) O
	meta   func(T) Meta
	// listed, when cached, answers Get and List (see Listed).
	listed []T
	cached bool
}

// NewKindFinder returns a finder of kind (as messages name it, such as
// "network") over lookup; opts wraps the common list options in the
// kind's own, meta reads a resource's ID, name and labels.
func NewKindFinder[T comparable, O any](kind string, lookup Lookup[T, O], opts func(hcloud.ListOpts) O, meta func(T) Meta) Finder[T, O] {
	return Finder[T, O]{kind: kind, lookup: lookup, opts: opts, meta: meta}
}

// Kind is the kind's name in messages, such as "placement-group".
func (f Finder[T, O]) Kind() string { return f.kind }

// Meta reads a resource's ID, name and labels.
func (f Finder[T, O]) Meta(v T) Meta { return f.meta(v) }

// Listed returns a finder that answers from all, one earlier listing of
// the cluster's resources of the kind, so that plan asks Hetzner once per
// kind whatever the number of pools or nodes. A stored ID missing from all
// (its labels were changed by hand) is still asked for; Refind asks
// Hetzner.
func (f Finder[T, O]) Listed(all []T) Finder[T, O] {
	f.listed, f.cached = all, true
	return f
}

// Get returns the resource with id, the zero T (nil) when it no longer
// exists.
func (f Finder[T, O]) Get(ctx context.Context, id int64) (T, error) {
	for _, x := range f.listed {
		if f.meta(x).ID == id {
			return x, nil
		}
	}
	v, _, err := f.lookup.GetByID(ctx, id)
	return v, err
}

// List returns the resources matching the label selector.
func (f Finder[T, O]) List(ctx context.Context, selector string) ([]T, error) {
	if !f.cached {
		return f.fetch(ctx, selector)
	}
	sel, err := cloud.ParseSelector(selector)
	if err != nil {
		return nil, err
	}
	var out []T
	for _, x := range f.listed {
		if sel.Matches(f.meta(x).Labels) {
			out = append(out, x)
		}
	}
	return out, nil
}

func (f Finder[T, O]) fetch(ctx context.Context, selector string) ([]T, error) {
	return f.lookup.AllWithOpts(ctx, f.opts(hcloud.ListOpts{LabelSelector: selector}))
}

// Find returns the resource q.ID names, else the one matching q.Selector
// that q.Owner owns; found is false when there is none. Matches with the
// cluster's name that Owner does not own are Owner.Foreign's error, two
// owned matches an error too.
func (f Finder[T, O]) Find(ctx context.Context, q Query) (v T, found bool, err error) {
	var zero T
	if q.ID != 0 {
		got, err := f.Get(ctx, q.ID)
		if err != nil {
			return zero, false, fmt.Errorf("get %s %d: %w", f.kind, q.ID, err)
		}
		if got != zero {
			return got, true, nil
		}
	}
	list, err := f.List(ctx, q.Selector)
	if err != nil {
		return zero, false, fmt.Errorf("list %ss: %w", f.kind, err)
	}
	return f.one(list, q)
}

// Refind asks Hetzner itself for the one owned match of q.Selector, also
// when the finder answers from an earlier listing: after a create whose
// response was lost, only a fresh list shows what it made.
func (f Finder[T, O]) Refind(ctx context.Context, q Query) (T, bool, error) {
	list, err := f.fetch(ctx, q.Selector)
	if err != nil {
		var zero T
		return zero, false, err
	}
	return f.one(list, q)
}

// one keeps the matches q.Owner owns: one is found, two is an error;
// none but others with the name is q.Owner.Foreign's error.
func (f Finder[T, O]) one(list []T, q Query) (T, bool, error) {
	var zero T
	var ours []T
	var foreign []string
	var foreignLabels map[string]string
	for _, it := range list {
		m := f.meta(it)
		if q.Owner.Owns(m.Labels) {
			ours = append(ours, it)
			continue
		}
		foreign = append(foreign, fmt.Sprintf("%s (%d)", m.Name, m.ID))
		foreignLabels = m.Labels
	}
	if len(ours) == 0 && len(foreign) > 0 {
		return zero, false, q.Owner.Foreign(f.kind, foreign, foreignLabels)
	}
	return cloud.One(ours, f.kind, q.Selector, func(v T) string { return f.meta(v).Name })
}
