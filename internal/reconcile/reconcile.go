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
