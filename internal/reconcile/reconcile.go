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
