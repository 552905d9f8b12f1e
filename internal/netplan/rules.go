package netplan

import (
	"fmt"
	"net/netip"
)

// minNetworkBits is Hetzner's smallest Network: "Minimum network size is /24"
// (Hetzner Cloud API reference, POST /networks, ip_range).
const minNetworkBits = 24

// minSubnetBits is Hetzner's smallest subnet: a /30 (Hetzner Cloud API
// reference, POST /networks/{id}/actions/add_subnet, ip_range: "Minimum
// Network size is /30").
const minSubnetBits = 30

// checkNetwork applies Hetzner's rules for a Network's ip_range.
func (v *validator) checkNetwork() {
	n := &v.network
	if !n.ok {
		return
	}
	p := n.prefix
	if !p.Addr().Is4() {
		v.add(n.field, SeverityError,
			fmt.Sprintf("the network range %s is IPv6: Hetzner Networks only support IPv4", p),
			"use a private IPv4 range such as 10.0.0.0/16")
		n.ok = false
		return
	}
	if !isPrivate(p) {
		v.add(n.field, SeverityError,
			fmt.Sprintf("the network range %s is not private: Hetzner requires one of the RFC1918 ranges 10.0.0.0/8, 172.16.0.0/12 or 192.168.0.0/16", p),
			"use a range inside 10.0.0.0/8, for example 10.0.0.0/16")
	}
	if p.Bits() > minNetworkBits {
		fix := "use a /16 such as 10.0.0.0/16"
		if wide := netip.PrefixFrom(p.Addr(), 16).Masked(); isPrivate(wide) {
			fix = "use " + wide.String() + " (Hetzner recommends a /16)"
		}
		v.add(n.field, SeverityError,
			fmt.Sprintf("the network range %s is too small: Hetzner's minimum network size is /24", p),
			fix)
	}
	if dockerOverlap(p) {
		v.add(n.field, SeverityWarning,
			fmt.Sprintf("the network range %s overlaps %s, Docker's default bridge network: hosts running Docker (CI runners, laptops on the tailnet) cannot reach those addresses", p, dockerRange),
			"use a range inside 10.0.0.0/8, for example 10.0.0.0/16")
	}
}

// checkSubnets checks that every subnet is IPv4, inside the network and
// overlaps no earlier subnet.
func (v *validator) checkSubnets() {
	for i := range v.subnets {
		s := &v.subnets[i]
		if !s.ok {
			continue
		}
		if !s.prefix.Addr().Is4() {
			v.add(s.field, SeverityError,
				fmt.Sprintf("the %s %s is IPv6: Hetzner Networks only support IPv4", s.label, s.prefix),
				v.suggestInNetwork(s.field, 24))
			s.ok = false
			continue
		}
		if s.prefix.Bits() > minSubnetBits {
			v.add(s.field, SeverityError,
				fmt.Sprintf("the %s %s is too small: Hetzner's minimum subnet size is /30", s.label, s.prefix),
				v.suggestInNetwork(s.field, 24))
			s.ok = false
			continue
		}
		if v.network.ok && !contains(v.network.prefix, s.prefix) {
			v.add(s.field, SeverityError,
				fmt.Sprintf("the %s %s is outside the network %s: Hetzner requires every subnet inside the network's range", s.label, s.prefix, v.network.prefix),
				v.suggestInNetwork(s.field, s.prefix.Bits()))
		}
		for j := 0; j < i; j++ {
			o := v.subnets[j]
			if o.ok && o.prefix.Overlaps(s.prefix) {
				v.add(s.field, SeverityError,
					fmt.Sprintf("the %s %s overlaps the %s %s: Hetzner subnets must not overlap", s.label, s.prefix, o.label, o.prefix),
					v.suggestInNetwork(s.field, s.prefix.Bits()))
			}
		}
	}
}

// checkClusterRanges checks the pod and service ranges against the subnets,
// each other, Tailscale's range and Docker's default bridge.
func (v *validator) checkClusterRanges() {
	tailscale := netip.MustParsePrefix(tailscaleRange)
	for _, r := range []*rangeOf{&v.pods, &v.services} {
		if !r.ok {
			continue
		}
		for _, s := range v.subnets {
			if s.ok && s.prefix.Overlaps(r.prefix) {
				v.add(r.field, SeverityError,
					fmt.Sprintf("the %s %s overlaps the %s %s: cluster addresses would collide with server addresses", r.label, r.prefix, s.label, s.prefix),
					v.suggestClusterRange(r))
			}
		}
		if r.prefix.Overlaps(tailscale) {
			v.add(r.field, SeverityError,
				fmt.Sprintf("the %s %s overlaps %s, the range Tailscale assigns tailnet addresses from: the control planes, which join the tailnet, could not tell cluster traffic from tailnet traffic", r.label, r.prefix, tailscaleRange),
				v.suggestClusterRange(r))
		}
		if dockerOverlap(r.prefix) {
			v.add(r.field, SeverityWarning,
				fmt.Sprintf("the %s %s overlaps %s, Docker's default bridge network: hosts running Docker cannot reach those cluster addresses", r.label, r.prefix, dockerRange),
				v.suggestClusterRange(r))
		}
	}
	if v.pods.ok && v.services.ok && v.pods.prefix.Overlaps(v.services.prefix) {
		v.add(v.services.field, SeverityError,
			fmt.Sprintf("the service range %s overlaps the pod range %s: Kubernetes needs them disjoint", v.services.prefix, v.pods.prefix),
			v.suggestClusterRange(&v.services))
	}
}

// checkNativeRouting requires the pod range inside the network when pods are
// routed through Hetzner Network routes.
//
// The hcloud cloud controller manager creates one Network route per node for
// its pod CIDR; Hetzner delivers route destinations only inside the Network's
// range, hence its rule "The cluster-cidr range must be within the Hetzner
// Cloud Network range, but must not overlap with any created subnets"
// (hetznercloud/hcloud-cloud-controller-manager, docs/deploy_with_networks.md,
// "Considerations on the IP ranges").
func (v *validator) checkNativeRouting() {
	if !v.l.NativeRouting || !v.pods.ok || !v.network.ok {
		return
	}
	if contains(v.network.prefix, v.pods.prefix) {
		return
	}
	v.add(v.pods.field, SeverityError,
		fmt.Sprintf("the pod range %s is outside the network %s, but pods are routed natively through Hetzner Network routes, which only deliver to destinations inside the network's range", v.pods.prefix, v.network.prefix),
		v.suggestInNetwork(v.pods.field, v.pods.prefix.Bits())+", or route pods through an overlay instead")
}

// suggestClusterRange proposes a free pod or service range: inside the
// network for natively routed pods, else outside every subnet and the network.
func (v *validator) suggestClusterRange(r *rangeOf) string {
	bits := r.prefix.Bits()
	if !r.prefix.Addr().Is4() || bits < 8 {
		bits = 16
	}
	if v.l.NativeRouting && r == &v.pods {
		return v.suggestInNetwork(r.field, bits)
	}
	used := v.usedExcept(r.field)
	if v.network.ok {
		used = append(used, v.network.prefix.String())
	}
	used = append(used, dockerRange)
	free, err := NextFreeSubnet("10.0.0.0/8", used, bits)
	if err != nil {
		return "pick a range inside 10.0.0.0/8 that overlaps no subnet and no other cluster range"
	}
	return "use " + free
}

// dockerOverlap reports whether p overlaps Docker's default bridge network.
func dockerOverlap(p netip.Prefix) bool {
	return p.Overlaps(netip.MustParsePrefix(dockerRange))
}
