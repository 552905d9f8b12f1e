package hcloudfake_test

import (
	"net"
	"strings"
	"testing"

	"github.com/hetznercloud/hcloud-go/v2/hcloud"
)

// Removing what is not there answers 404 not_found naming it: a target,
// a service, a network the load balancer is not attached to, a route.
func TestRemovingWhatIsNotThereIsNotFound(t *testing.T) {
	e, c, network := newNetworkEnv(t, "10.0.1.0/24")
	lb := e.newTCPLoadBalancer(t, 80, 80)
	_, ip, err := net.ParseCIDR("10.0.9.0/24")
	if err != nil {
		t.Fatal(err)
	}
	cases := map[string]func() error{
		"target not found on the load balancer": func() error {
			_, _, err := c.LoadBalancer.RemoveIPTarget(ctx(t), lb, net.ParseIP("203.0.113.5"))
			return err
		},
		"no service listens on port 443": func() error {
			_, _, err := c.LoadBalancer.DeleteService(ctx(t), lb, 443)
			return err
		},
		"is not attached to network": func() error {
			_, _, err := c.LoadBalancer.DetachFromNetwork(ctx(t), lb, hcloud.LoadBalancerDetachFromNetworkOpts{Network: network})
			return err
		},
		"route to 10.0.9.0/24 via 10.0.1.1 not found": func() error {
			_, _, err := c.Network.DeleteRoute(ctx(t), network, hcloud.NetworkDeleteRouteOpts{Route: hcloud.NetworkRoute{
				Destination: ip, Gateway: net.ParseIP("10.0.1.1")}})
			return err
		},
	}
	for want, remove := range cases {
		err := remove()
		if !hcloud.IsError(err, hcloud.ErrorCodeNotFound) || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: got %v, want not_found", want, err)
		}
	}
}
