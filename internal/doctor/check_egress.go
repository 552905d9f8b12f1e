package doctor

import (
	"context"
	"fmt"
	"net/netip"
	"strings"
)

// Route is one route of a node's main table (network.RouteStatus).
type Route struct {
	// Family is "inet4" or "inet6".
	Family string
	// Destination is the prefix; "" for a default route.
	Destination string
	// Gateway is the next hop; "" for an on-link route.
	Gateway string
	// Link is the outgoing link.
	Link string
}

// RouteSource reads a node's routes; a TalosSource that implements it
// enables the egress check.
type RouteSource interface {
	// Routes lists the node's routes in the main table.
	Routes(ctx context.Context, node string) ([]Route, error)
}

// checkEgress verifies that every node has an IPv4 default route, and that
// a node without a public IPv4 has it via the private network's gateway:
// since Hetzner's DHCP change of 2025-08-11 the private network no longer
// hands one out (kube-hetzner #1873, #2283; hetzner-k3s #621), and without
// it such a node pulls no image and reaches no API outside the network.
func checkEgress(ctx context.Context, env *Env) Result {
	rs, ok := env.Talos.(RouteSource)
	if env.Talos == nil || !ok {
		return skip("the Talos API is not available to the doctor")
	}
	nodes := append(append([]NodeRef{}, env.ControlPlanes...), env.Workers...)
	if len(nodes) == 0 {
		return skip("no nodes to check")
	}
	gw, haveGW := networkGateway(env.NetworkCIDR)
	var evidence, problems, fixes, unread []string
	for _, n := range nodes {
		routes, err := rs.Routes(ctx, talosNode(n))
		if err != nil {
			unread = append(unread, fmt.Sprintf("%s: routes unreadable: %v", n.Name, err))
			continue
		}
		line, problem, fix := judgeEgress(n, routes, gw, haveGW, env.NetworkCIDR)
		evidence = append(evidence, line)
		if problem != "" {
			problems, fixes = append(problems, problem), append(fixes, fix)
		}
	}
	if len(unread) == len(nodes) {
		return Result{Status: StatusError, Evidence: unread, Explanation: "could not read the routes of any node",
			Fix: "check that the Talos API answers (talos-endpoints check), then run the doctor again"}
	}
	switch {
	case len(problems) > 0:
		return Result{Status: StatusFail, Evidence: append(append(problems, evidence...), unread...),
			Explanation: "a node without a default route reaches nothing outside its networks: image pulls, the Hetzner API and time servers fail while the node looks healthy",
			Fix:         strings.Join(uniq(fixes), "; ")}
	case len(unread) > 0:
		return Result{Status: StatusWarn, Evidence: append(unread, evidence...),
			Explanation: "some nodes' routes could not be read; their egress is unchecked",
			Fix:         "check that the Talos API answers for those nodes, then run the doctor again"}
	}
	return pass(evidence...)
}

// networkGateway is the first address of the network's range: Hetzner's
// gateway of a cloud network (10.0.0.1 for 10.0.0.0/16).
func networkGateway(cidr string) (netip.Addr, bool) {
	p, err := netip.ParsePrefix(cidr)
	if err != nil || !p.Addr().Is4() {
		return netip.Addr{}, false
	}
	return p.Masked().Addr().Next(), true
}

// judgeEgress returns the node's evidence line and, when its IPv4 egress
// is broken, the problem and the fix.
func judgeEgress(n NodeRef, routes []Route, gw netip.Addr, haveGW bool, cidr string) (line, problem, fix string) {
	var defaults []string
	privLink := ""
	viaGW := false
	for _, r := range routes {
		if r.Family == "inet4" && r.Destination == cidr && cidr != "" {
			privLink = r.Link
		}
		if r.Family != "inet4" || (r.Destination != "" && r.Destination != "0.0.0.0/0") {
			continue
		}
		defaults = append(defaults, fmt.Sprintf("via %s dev %s", orNone1(r.Gateway), r.Link))
		if haveGW && r.Gateway == gw.String() {
			viaGW = true
		}
	}
	shape := "public IPv4 " + n.PublicIP
	if n.PublicIP == "" {
		shape = "no public IPv4"
	}
	line = fmt.Sprintf("%s (%s): IPv4 default route %s", n.Name, shape, orNone(defaults))
	gwText := "the network gateway (the first address of network.cidr)"
	if haveGW {
		gwText = "the network gateway " + gw.String()
	}
	if privLink == "" {
		privLink = "the private link"
	}
	cfgFix := fmt.Sprintf("route 0.0.0.0/0 via %s on %s in the node's Talos config (machine.network.interfaces[].routes), and route 0.0.0.0/0 in the Hetzner network to a NAT gateway", gwText, privLink)
	switch {
	case n.PublicIP != "" && len(defaults) == 0:
		return line, fmt.Sprintf("%s has a public IPv4 but no IPv4 default route", n.Name),
			"check the node's network config: the public NIC (eth0) gets its default route via 172.31.1.1 by DHCP; a static interface config without a route removes it"
	case n.PublicIP == "" && len(defaults) == 0:
		return line, fmt.Sprintf("%s has no public IPv4 and no IPv4 default route: since Hetzner's DHCP change of 2025-08-11 the private network no longer supplies one", n.Name), cfgFix
	case n.PublicIP == "" && haveGW && !viaGW:
		return line, fmt.Sprintf("%s has no public IPv4 and its IPv4 default route (%s) is not via %s", n.Name, strings.Join(defaults, ", "), gwText), cfgFix
	}
	return line, "", ""
}
