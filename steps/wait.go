package steps

import (
	"github.com/hetznercloud/hcloud-go/v2/hcloud"

	"github.com/ohmytalos/ohmytalos/internal/cloud"
)

// waiter waits for Hetzner actions on c, polling by the progress they
// report (cloud.Waiter): the long waits of a cold apply (server creates,
// load balancers) cost a few polls each instead of one every backoff step.
func (d *Deps) waiter(c *hcloud.Client) cloud.Waiter { return cloud.NewWaiter(c, d.PollInterval) }
