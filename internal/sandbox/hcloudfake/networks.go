package hcloudfake

import (
	"fmt"
	"maps"
	"net"
	"net/http"
	"net/netip"
	"slices"

	"github.com/hetznercloud/hcloud-go/v2/hcloud/schema"
)

// networkState is a private network; its servers and load balancers are
// derived from their private_net entries at render time.
type networkState struct {
	n schema.Network
}

// networkKind is the collection behind /networks.
func (f *Fake) networkKind() *collection[*networkState, schema.Network] {
	c := &collection[*networkState, schema.Network]{plural: "networks", single: "network", noun: "network",
		items: f.networks, render: f.renderNetwork, create: f.createNetwork, action: f.networkAction,
		fields: func(x *networkState) (int64, *string, *map[string]string) { return x.n.ID, &x.n.Name, &x.n.Labels },
		remove: func(_ *request, id int64, _ *networkState) (*action, error) {
			// Hetzner detaches attached servers and load balancers automatically.
			for _, ss := range f.servers {
				ss.s.PrivateNet = slices.DeleteFunc(ss.s.PrivateNet, func(pn schema.ServerPrivateNet) bool { return pn.Network == id })
			}
			for _, lb := range f.lbs {
				lb.PrivateNet = slices.DeleteFunc(lb.PrivateNet, func(pn schema.LoadBalancerPrivateNet) bool { return pn.Network == id })
			}
			return nil, nil
		},
	}
	c.update = func(rq *request, ns *networkState) error {
		var req schema.NetworkUpdateRequest
		if err := rq.decode(&req); err != nil {
			return err
		}
		if err := c.patch(ns, optName(req.Name), req.Labels); err != nil {
			return err
		}
		if req.ExposeRoutesToVSwitch != nil {
			ns.n.ExposeRoutesToVSwitch = *req.ExposeRoutesToVSwitch
		}
		return nil
	}
	return c
}

// parseIPv4Prefix parses a canonical IPv4 CIDR as Hetzner requires for ip_range.
func parseIPv4Prefix(field, s string) (netip.Prefix, error) {
	p, err := netip.ParsePrefix(s)
	if err != nil || !p.Addr().Is4() {
		return netip.Prefix{}, errInvalid(field, fmt.Sprintf("%q is not an IPv4 CIDR range", s))
	}
	if p.Masked() != p {
		return netip.Prefix{}, errInvalid(field, fmt.Sprintf("%q has host bits set; use %s", s, p.Masked()))
	}
	return p, nil
}

// rfc1918 are the private IPv4 ranges a Network may use.
var rfc1918 = []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8"), netip.MustParsePrefix("172.16.0.0/12"), netip.MustParsePrefix("192.168.0.0/16")}

// Size limits of the API description: a Network's ip_range "must be one of
// the private IPv4 ranges of RFC1918. Minimum network size is /24" (POST
// /networks), a subnet's "Minimum Network size is /30" (add_subnet).
const (
	minNetworkBits = 24
	minSubnetBits  = 30
)

// checkNetworkRange applies the API description's rules to a Network's ip_range.
func checkNetworkRange(p netip.Prefix) error {
	private := false
	for _, r := range rfc1918 {
		if r.Bits() <= p.Bits() && r.Contains(p.Addr()) {
			private = true
		}
	}
	if !private {
		return errInvalid("ip_range", fmt.Sprintf("ip_range %s must be inside one of the private RFC1918 ranges 10.0.0.0/8, 172.16.0.0/12, 192.168.0.0/16", p))
	}
	if p.Bits() > minNetworkBits {
		return errInvalid("ip_range", fmt.Sprintf("ip_range %s is smaller than the minimum network size /24", p))
	}
	return nil
}

func (f *Fake) createNetwork(rq *request) (int, any, error) {
	req, err := decodeCreate(rq, f.networkKind(), func(r *schema.NetworkCreateRequest) string { return r.Name })
	if err != nil {
		return 0, nil, err
	}
	p, err := parseIPv4Prefix("ip_range", req.IPRange)
	if err != nil {
		return 0, nil, err
	}
	if err := checkNetworkRange(p); err != nil {
		return 0, nil, err
	}
	if err := checkNewLabels(req.Labels); err != nil {
		return 0, nil, err
	}
	ns := &networkState{n: schema.Network{ID: f.nextID(), Name: req.Name, Created: rq.created(),
		IPRange: req.IPRange, Subnets: []schema.NetworkSubnet{}, Routes: []schema.NetworkRoute{},
		Labels: labelsOrEmpty(req.Labels), ExposeRoutesToVSwitch: req.ExposeRoutesToVSwitch}}
	for _, sn := range req.Subnets {
		if err := addSubnet(ns, schema.NetworkActionAddSubnetRequest{Type: sn.Type, IPRange: sn.IPRange, NetworkZone: sn.NetworkZone}); err != nil {
			return 0, nil, err
		}
	}
	for _, r := range req.Routes {
		if err := addRoute(ns, r); err != nil {
			return 0, nil, err
		}
	}
	f.networks[ns.n.ID] = ns
	return http.StatusCreated, map[string]any{"network": f.renderNetwork(ns)}, nil
}

var networkZones = []string{"eu-central", "us-east", "us-west", "ap-southeast"}

func addSubnet(ns *networkState, req schema.NetworkActionAddSubnetRequest) error {
	if req.Type != "cloud" && req.Type != "server" && req.Type != "vswitch" {
		return errInvalid("type", fmt.Sprintf("subnet type %q is invalid; use cloud", req.Type))
	}
	if !slices.Contains(networkZones, req.NetworkZone) {
		return errInvalid("network_zone", fmt.Sprintf("network zone %q does not exist; use one of %v", req.NetworkZone, networkZones))
	}
	parent, _ := netip.ParsePrefix(ns.n.IPRange)
	var sub netip.Prefix
	if req.IPRange == "" {
		// Hetzner picks the next free /24 when no range is given.
		for cand := (netip.PrefixFrom(parent.Addr(), 24)); parent.Contains(cand.Addr()); {
			if !overlapsSubnet(ns, cand) {
				sub = cand
				break
			}
			next := cand.Addr().As4()
			next[2]++
			if next[2] == 0 {
				next[1]++
			}
			cand = netip.PrefixFrom(netip.AddrFrom4(next), 24)
		}
		if !sub.IsValid() {
			return errCode(http.StatusUnprocessableEntity, "no_subnet_available", "no free /24 left in "+ns.n.IPRange)
		}
	} else {
		var err error
		if sub, err = parseIPv4Prefix("ip_range", req.IPRange); err != nil {
			return err
		}
		if sub.Bits() > minSubnetBits {
			return errInvalid("ip_range", fmt.Sprintf("subnet %s is smaller than the minimum subnet size /30", sub))
		}
		if !parent.Contains(sub.Addr()) || sub.Bits() < parent.Bits() {
			return errInvalid("ip_range", fmt.Sprintf("subnet %s is not inside the network range %s", sub, parent))
		}
		if overlapsSubnet(ns, sub) {
			return errCode(http.StatusUnprocessableEntity, "networks_overlap", fmt.Sprintf("subnet %s overlaps an existing subnet of network %d", sub, ns.n.ID))
		}
	}
	gw := parent.Addr().Next()
	ns.n.Subnets = append(ns.n.Subnets, schema.NetworkSubnet{Type: req.Type, IPRange: sub.String(), NetworkZone: req.NetworkZone,
		Gateway: gw.String(), VSwitchID: req.VSwitchID})
	return nil
}

func overlapsSubnet(ns *networkState, p netip.Prefix) bool {
	for _, s := range ns.n.Subnets {
		if q, err := netip.ParsePrefix(s.IPRange); err == nil && q.Overlaps(p) {
			return true
		}
	}
	return false
}

func addRoute(ns *networkState, r schema.NetworkRoute) error {
	if _, err := parseIPv4Prefix("destination", r.Destination); err != nil {
		return err
	}
	gw, err := netip.ParseAddr(r.Gateway)
	parent, _ := netip.ParsePrefix(ns.n.IPRange)
	if err != nil || !parent.Contains(gw) {
		return errInvalid("gateway", fmt.Sprintf("gateway %q must be an address inside %s", r.Gateway, ns.n.IPRange))
	}
	if slices.Contains(ns.n.Routes, r) {
		return errCode(http.StatusConflict, "uniqueness_error", fmt.Sprintf("route to %s via %s already exists", r.Destination, r.Gateway))
	}
	ns.n.Routes = append(ns.n.Routes, r)
	return nil
}

func (f *Fake) networkAction(rq *request, ns *networkState, command string) (int, any, error) {
	switch command {
	case "add_subnet":
		var req schema.NetworkActionAddSubnetRequest
		if err := rq.decode(&req); err != nil {
			return 0, nil, err
		}
		if err := addSubnet(ns, req); err != nil {
			return 0, nil, err
		}
	case "delete_subnet":
		var req schema.NetworkActionDeleteSubnetRequest
		if err := rq.decode(&req); err != nil {
			return 0, nil, err
		}
		i := slices.IndexFunc(ns.n.Subnets, func(s schema.NetworkSubnet) bool { return s.IPRange == req.IPRange })
		if i < 0 {
			return 0, nil, errCode(http.StatusNotFound, "not_found", fmt.Sprintf("subnet %s not found in network %d", req.IPRange, ns.n.ID))
		}
		sub, _ := netip.ParsePrefix(req.IPRange)
		for ip := range f.usedIPs(ns.n.ID) {
			if a, err := netip.ParseAddr(ip); err == nil && sub.Contains(a) {
				return 0, nil, errCode(http.StatusUnprocessableEntity, "resource_in_use", fmt.Sprintf("subnet %s still has attached resources (%s); detach them first", req.IPRange, ip))
			}
		}
		ns.n.Subnets = slices.Delete(ns.n.Subnets, i, i+1)
	case "add_route":
		var req schema.NetworkActionAddRouteRequest
		if err := rq.decode(&req); err != nil {
			return 0, nil, err
		}
		if err := addRoute(ns, schema.NetworkRoute{Destination: req.Destination, Gateway: req.Gateway}); err != nil {
			return 0, nil, err
		}
	case "delete_route":
		var req schema.NetworkActionDeleteRouteRequest
		if err := rq.decode(&req); err != nil {
			return 0, nil, err
		}
		route := schema.NetworkRoute{Destination: req.Destination, Gateway: req.Gateway}
		if err := removeFirst(&ns.n.Routes, func(r schema.NetworkRoute) bool { return r == route },
			fmt.Sprintf("route to %s via %s not found", req.Destination, req.Gateway)); err != nil {
			return 0, nil, err
		}
	case "change_protection":
		var req schema.NetworkActionChangeProtectionRequest
		if err := rq.decode(&req); err != nil {
			return 0, nil, err
		}
		if req.Delete != nil {
			ns.n.Protection.Delete = *req.Delete
		}
	default:
		return 0, nil, errNoRoute(rq)
	}
	a := f.newAction(command, rq.now, ref("network", ns.n.ID))
	return http.StatusCreated, f.actionBody(a, rq.now), nil
}

// renderNetwork fills in the attached servers and load balancers.
func (f *Fake) renderNetwork(ns *networkState) schema.Network {
	n := ns.n
	n.Labels = maps.Clone(n.Labels)
	n.Subnets = slices.Clone(n.Subnets)
	n.Routes = slices.Clone(n.Routes)
	n.Servers, n.LoadBalancers = []int64{}, []int64{}
	for _, id := range slices.Sorted(maps.Keys(f.servers)) {
		if slices.ContainsFunc(f.servers[id].s.PrivateNet, func(pn schema.ServerPrivateNet) bool { return pn.Network == ns.n.ID }) {
			n.Servers = append(n.Servers, id)
		}
	}
	for _, id := range slices.Sorted(maps.Keys(f.lbs)) {
		if slices.ContainsFunc(f.lbs[id].PrivateNet, func(pn schema.LoadBalancerPrivateNet) bool { return pn.Network == ns.n.ID }) {
			n.LoadBalancers = append(n.LoadBalancers, id)
		}
	}
	return n
}

// usedIPs maps every private IP in use in a network (server IPs, alias IPs,
// load balancer IPs) to the primary IP of its owner.
func (f *Fake) usedIPs(networkID int64) map[string]string {
	used := map[string]string{}
	for _, ss := range f.servers {
		for _, pn := range ss.s.PrivateNet {
			if pn.Network != networkID {
				continue
			}
			used[pn.IP] = pn.IP
			for _, a := range pn.AliasIPs {
				used[a] = pn.IP
			}
		}
	}
	for _, lb := range f.lbs {
		for _, pn := range lb.PrivateNet {
			if pn.Network == networkID {
				used[pn.IP] = pn.IP
			}
		}
	}
	return used
}

// subnetFor returns the subnet of a network containing ip, or nil.
func (f *Fake) subnetFor(networkID int64, ip net.IP) *schema.NetworkSubnet {
	ns, ok := f.networks[networkID]
	if !ok {
		return nil
	}
	addr, ok := netip.AddrFromSlice(ip.To4())
	if !ok {
		return nil
	}
	for i, s := range ns.n.Subnets {
		if p, err := netip.ParsePrefix(s.IPRange); err == nil && p.Contains(addr) {
			return &ns.n.Subnets[i]
		}
	}
	return nil
}

// allocatePrivateIP returns want (checked) or the first free address of a
// subnet in the zone. The network's first address is its gateway; the first
// and last addresses of a subnet are not handed out.
func (f *Fake) allocatePrivateIP(networkID int64, zone, want string) (string, error) {
	ns, ok := f.networks[networkID]
	if !ok {
		return "", errInvalid("network", fmt.Sprintf("network %d not found", networkID))
	}
	used := f.usedIPs(networkID)
	parent, _ := netip.ParsePrefix(ns.n.IPRange)
	gateway := parent.Addr().Next()
	if want != "" {
		ip := net.ParseIP(want)
		sub := f.subnetFor(networkID, ip)
		if ip == nil || sub == nil {
			return "", errInvalid("ip", fmt.Sprintf("ip %q is not inside a subnet of network %d", want, networkID))
		}
		if sub.NetworkZone != zone {
			return "", errInvalid("ip", fmt.Sprintf("subnet %s is in zone %s, the resource is in %s", sub.IPRange, sub.NetworkZone, zone))
		}
		if used[ip.String()] != "" || ip.String() == gateway.String() {
			return "", errCode(http.StatusUnprocessableEntity, "ip_not_available", fmt.Sprintf("ip %s is already used in network %d", want, networkID))
		}
		return ip.String(), nil
	}
	zoneMatch := false
	for _, s := range ns.n.Subnets {
		if s.NetworkZone != zone || s.Type == "vswitch" {
			continue
		}
		zoneMatch = true
		p, err := netip.ParsePrefix(s.IPRange)
		if err != nil {
			continue
		}
		for a := p.Addr().Next(); p.Contains(a) && p.Contains(a.Next()); a = a.Next() {
			if a != gateway && used[a.String()] == "" {
				return a.String(), nil
			}
		}
	}
	if !zoneMatch {
		return "", errCode(http.StatusUnprocessableEntity, "no_subnet_available",
			fmt.Sprintf("network %d has no subnet in network zone %s; add one with add_subnet", networkID, zone))
	}
	return "", errCode(http.StatusUnprocessableEntity, "no_subnet_available", fmt.Sprintf("all subnets of network %d in %s are full", networkID, zone))
}
