package talosapi

import (
	"context"

	"github.com/siderolabs/talos/pkg/machinery/client"
	"github.com/siderolabs/talos/pkg/machinery/nethelpers"
	"github.com/siderolabs/talos/pkg/machinery/resources/network"
)

// Route is one route of the node's main routing table (network.RouteStatus).
type Route struct {
	// Family is "inet4" or "inet6".
	Family string
	// Destination is the prefix; "" for a default route.
	Destination string
	// Gateway is the next hop; "" for a route on the link.
	Gateway string
	// Link is the outgoing link's name.
	Link string
}

// Routes lists the node's routes in the main table.
func (c *Client) Routes(ctx context.Context) ([]Route, error) {
	return listStatus(ctx, c, "routes", func(r *network.RouteStatus) (Route, bool) {
		s := r.TypedSpec()
		if s.Table != nethelpers.TableMain {
			return Route{}, false
		}

		rt := Route{Family: s.Family.String(), Link: s.OutLinkName}
		if s.Destination.IsValid() && s.Destination.Bits() > 0 {
			rt.Destination = s.Destination.String()
		}

		if s.Gateway.IsValid() {
			rt.Gateway = s.Gateway.String()
		}

		return rt, true
	})
}

// OnNode makes the calls made with the returned context go through the
// client's endpoint to node (an IP on the cluster network), as talosctl
// -e ENDPOINT -n NODE does: apid proxies them.
func OnNode(ctx context.Context, node string) context.Context {
	return client.WithNode(ctx, node)
}
