// Package reconcile holds what the per-kind reconcile services share: the
// typed difference between a resource's labels and the ones ohmytalos sets.
// Each Hetzner resource kind has its own package below (loadbalancer, ...),
// a service over a narrow interface of the hcloud-go calls it makes, after
// cluster-api-provider-hetzner's pkg/services/hcloud/loadbalancer.
package reconcile

import (
	"context"

	"github.com/hetznercloud/hcloud-go/v2/hcloud"
)

// ActionWaiter waits for actions to finish (hcloud.IActionClient has it);
// the services wait for the actions of their in-place changes.
type ActionWaiter interface {
	WaitFor(ctx context.Context, actions ...*hcloud.Action) error
}

// Lookup is the two calls of an hcloud-go resource client (such as
// hcloud.ILoadBalancerClient) that find its resources: T is the resource,
// O its list options.
type Lookup[T any, O any] interface {
	GetByID(ctx context.Context, id int64) (T, *hcloud.Response, error)
	AllWithOpts(ctx context.Context, opts O) ([]T, error)
}

// Finder finds resources of one kind by ID and by label selector; each
// service embeds one.
type Finder[T any, O any] struct {
	lookup Lookup[T, O]
	opts   func(hcloud.ListOpts) O
}

// NewFinder returns a finder over lookup; opts wraps the common list
// options in the kind's own.
func NewFinder[T any, O any](lookup Lookup[T, O], opts func(hcloud.ListOpts) O) Finder[T, O] {
	return Finder[T, O]{lookup: lookup, opts: opts}
}

// Get returns the resource with id, the zero T (nil) when it no longer
// exists.
func (f Finder[T, O]) Get(ctx context.Context, id int64) (T, error) {
	v, _, err := f.lookup.GetByID(ctx, id)
	return v, err
}

// List returns the resources matching the label selector.
func (f Finder[T, O]) List(ctx context.Context, selector string) ([]T, error) {
	return f.lookup.AllWithOpts(ctx, f.opts(hcloud.ListOpts{LabelSelector: selector}))
}

// Retry calls fn again while it fails in a way worth retrying (such as
// Hetzner's "locked" while another action runs on the resource).
type Retry func(ctx context.Context, fn func() error) error

// Act makes one call that starts an action, again while retry says so
// (nil: once), and waits for the action.
func Act(ctx context.Context, retry Retry, actions ActionWaiter, call func() (*hcloud.Action, error)) error {
	var a *hcloud.Action
	once := func() (err error) {
		a, err = call()
		return err
	}
	var err error
	if retry != nil {
		err = retry(ctx, once)
	} else {
		err = once()
	}
	if err == nil && a != nil {
		err = actions.WaitFor(ctx, a)
	}
	return err
}
