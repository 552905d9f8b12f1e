package talosfake

import (
	"context"
	"fmt"
	"net/netip"

	"github.com/cosi-project/runtime/pkg/resource"
	"github.com/cosi-project/runtime/pkg/state"
	"github.com/siderolabs/talos/pkg/machinery/config/config"
	"github.com/siderolabs/talos/pkg/machinery/nethelpers"
	"github.com/siderolabs/talos/pkg/machinery/resources/network"
)

// Hetzner's gateways: the public IPv4 of a cloud server is a /32 reached
// through 172.31.1.1 (handed out by DHCP on the public NIC), its IPv6 /64
// through fe80::1; a private network's gateway is the first address of
// its ip_range (e.g. 10.0.0.1 for 10.0.0.0/16; kube-hetzner PR #1901).
// Since Hetzner's DHCP change of 2025-08-11 the private NIC's DHCP hands out
// the route to the network's range only, no default route (kube-hetzner
// #1873, PR #1845 and #1941): a server without a public IPv4 has IPv4
// egress only when its own config routes 0.0.0.0/0 via the network
// gateway.
var (
	hetznerIPv4Gateway = netip.MustParseAddr("172.31.1.1")
	hetznerIPv6Gateway = netip.MustParseAddr("fe80::1")
)

// cfgRoute is one route a machine config sets on a link.
type cfgRoute struct {
	link     string
	dst      netip.Prefix // invalid = default route
	gw       netip.Addr
	priority uint32
}

// readRoutes collects the routes of the legacy machine.network.interfaces
// and of the LinkConfig documents (config/types/network).
func (nc *nodeConfig) readRoutes(m config.MachineConfig, links []config.NetworkCommonLinkConfig) {
	if m != nil && m.Network() != nil {
		for _, d := range m.Network().Devices() {
			for _, r := range d.Routes() {
				cr := cfgRoute{link: d.Interface(), priority: r.Metric()}
				if p, err := netip.ParsePrefix(r.Network()); err == nil {
					cr.dst = p
				}
				cr.gw, _ = netip.ParseAddr(r.Gateway())
				nc.routes = append(nc.routes, cr)
			}
		}
	}

	for _, l := range links {
		for _, r := range l.Routes() {
			cr := cfgRoute{link: l.Name()}
			cr.dst, _ = r.Destination().Get()
			cr.gw, _ = r.Gateway().Get()
			cr.priority, _ = r.Metric().Get()
			nc.routes = append(nc.routes, cr)
		}
	}
}

// wantRoutes is the main routing table the node reports, from its NICs
// and its config.
func (n *Node) wantRoutes() []*network.RouteStatus {
	var out []*network.RouteStatus

	for _, l := range n.links {
		if l.name == "lo" {
			continue
		}

		for _, a := range l.addrs {
			switch {
			case a.Addr().Is4() && l.name == n.publicLink():
				out = append(out, routeStatus(l, netip.PrefixFrom(hetznerIPv4Gateway, 32), netip.Addr{}, nethelpers.ScopeLink, 1024),
					routeStatus(l, netip.Prefix{}, hetznerIPv4Gateway, nethelpers.ScopeGlobal, 1024))
			case a.Addr().Is6():
				out = append(out, routeStatus(l, netip.Prefix{}, hetznerIPv6Gateway, nethelpers.ScopeGlobal, 1024))
			case a.Addr().Is4():
				if p, err := netip.ParsePrefix(n.opts.NetworkCIDR); err == nil {
					gw := p.Masked().Addr().Next()
					out = append(out, routeStatus(l, netip.PrefixFrom(gw, 32), netip.Addr{}, nethelpers.ScopeLink, 1024),
						routeStatus(l, p.Masked(), gw, nethelpers.ScopeGlobal, 1024))
				}
			}
		}
	}

	if n.cfg == nil {
		return out
	}

	for _, r := range n.cfg.routes {
		l := n.link(r.link)
		if l == nil {
			continue // machined cannot route over a link that does not exist
		}

		prio := r.priority
		if prio == 0 {
			prio = 1024
		}

		out = append(out, routeStatus(*l, r.dst, r.gw, nethelpers.ScopeGlobal, prio))
	}

	return out
}

// publicLink is eth0 when the server has a public NIC, else "".
func (n *Node) publicLink() string {
	if n.opts.PublicIP != "" || n.opts.PublicIPv6 != "" {
		return "eth0"
	}

	return ""
}

func routeStatus(l linkInfo, dst netip.Prefix, gw netip.Addr, scope nethelpers.Scope, prio uint32) *network.RouteStatus {
	fam := nethelpers.FamilyInet4
	if (dst.IsValid() && dst.Addr().Is6()) || (gw.IsValid() && gw.Is6()) {
		fam = nethelpers.FamilyInet6
	}

	rs := network.NewRouteStatus(network.NamespaceName, network.RouteID(nethelpers.TableMain, fam, dst, gw, prio, l.name))
	s := rs.TypedSpec()
	s.Family, s.Destination, s.Gateway = fam, dst, gw
	s.OutLinkIndex, s.OutLinkName = l.index, l.name
	s.Table, s.Priority, s.Scope = nethelpers.TableMain, prio, scope
	s.Type, s.Protocol = nethelpers.TypeUnicast, nethelpers.ProtocolStatic

	return rs
}

// writeRoutes replaces the node's RouteStatus resources with wantRoutes.
func (n *Node) writeRoutes(ctx context.Context, want []*network.RouteStatus) error {
	cur, err := n.res.List(ctx, resource.NewMetadata(network.NamespaceName, network.RouteStatusType, "", resource.VersionUndefined))
	if err != nil {
		return fmt.Errorf("list routes: %w", err)
	}

	for _, r := range cur.Items {
		if err := n.res.Destroy(ctx, r.Metadata()); err != nil && !state.IsNotFoundError(err) {
			return fmt.Errorf("remove route %s: %w", r.Metadata().ID(), err)
		}
	}

	for _, r := range want {
		if err := upsert(ctx, n.res, r); err != nil {
			return fmt.Errorf("write route %s: %w", r.Metadata().ID(), err)
		}
	}

	return nil
}

// hasIPv4Default reports whether the node's routes include an IPv4
// default route.
func (n *Node) hasIPv4Default() bool {
	for _, r := range n.wantRoutes() {
		s := r.TypedSpec()
		if s.Family == nethelpers.FamilyInet4 && (!s.Destination.IsValid() || s.Destination.Bits() == 0) {
			return true
		}
	}

	return false
}
