package netplan

import (
	"fmt"
	"net/netip"
)

// checkVIP checks the API VIP: an IPv4 address inside the control-plane
// subnet (Subnets[0]) that no server and no gateway can hold. Talos moves the
// VIP between control planes as a Hetzner alias IP of their private interface
// (HCloudVIPConfig), and Hetzner only accepts alias IPs from the subnet the
// server is attached to.
func (v *validator) checkVIP() {
	if v.l.VIP == "" {
		return
	}
	a, err := netip.ParseAddr(v.l.VIP)
	cp, haveCP := v.controlPlane()
	fix := "use an address of the control-plane subnet, for example its last usable address"
	if haveCP {
		if s := suggestVIP(cp.prefix); s != "" {
			fix = "use " + s + " (the last usable address of " + cp.prefix.String() + ", away from the low addresses Hetzner assigns to servers first)"
		}
	}
	if err != nil || !a.Is4() || a.Zone() != "" {
		v.add(fieldVIP, SeverityError,
			fmt.Sprintf("the VIP %q is not an IPv4 address", v.l.VIP), fix)
		return
	}
	if !haveCP {
		return
	}
	p := cp.prefix
	if !p.Contains(a) {
		v.add(fieldVIP, SeverityError,
			fmt.Sprintf("the VIP %s is outside the control-plane subnet %s: Hetzner only moves alias IPs within the subnet the control planes are attached to", a, p),
			fix)
		return
	}
	n := first(netip.PrefixFrom(a, 32))
	switch {
	case n == first(p):
		v.add(fieldVIP, SeverityError,
			fmt.Sprintf("the VIP %s is the network address of %s, which no host can use", a, p), fix)
	case n == first(p)+1:
		v.add(fieldVIP, SeverityError,
			fmt.Sprintf("the VIP %s is the gateway of %s: Hetzner reserves the first address of a subnet for its gateway", a, p), fix)
	case n == last(p):
		v.add(fieldVIP, SeverityError,
			fmt.Sprintf("the VIP %s is the broadcast address of %s, which no host can use", a, p), fix)
	}
}

// checkCapacity checks that every subnet has an address for each of its
// servers, and for the VIP in the control-plane subnet.
func (v *validator) checkCapacity() {
	for i, s := range v.subnets {
		if !s.ok || !s.prefix.Addr().Is4() {
			continue
		}
		need := v.l.Subnets[i].Count
		extra := ""
		if i == 0 && v.vipIn(s.prefix) {
			need++
			extra = " plus the VIP"
		}
		have := Hosts(s.prefix.String())
		if need <= have {
			continue
		}
		fix := "use a larger subnet"
		if bits := prefixFor(need); bits > 0 {
			fix = v.suggestInNetwork(s.field, bits)
		}
		v.add(s.field, SeverityError,
			fmt.Sprintf("the %s %s has %d usable addresses (Hetzner reserves the network, gateway and broadcast addresses) but needs %d: %d servers%s",
				s.label, s.prefix, have, need, v.l.Subnets[i].Count, extra),
			fix)
	}
}

// controlPlane returns the parsed control-plane subnet, if there is one.
func (v *validator) controlPlane() (rangeOf, bool) {
	if len(v.subnets) == 0 || !v.subnets[0].ok || !v.subnets[0].prefix.Addr().Is4() {
		return rangeOf{}, false
	}
	return v.subnets[0], true
}

// vipIn reports whether the VIP parses and lies in p.
func (v *validator) vipIn(p netip.Prefix) bool {
	a, err := netip.ParseAddr(v.l.VIP)
	return err == nil && p.Contains(a)
}

// suggestVIP returns the last usable address of an IPv4 subnet, or "" when the
// subnet is too small to spare one.
func suggestVIP(p netip.Prefix) string {
	if p.Bits() > 29 {
		return ""
	}
	return addrOf(last(p) - 1).String()
}
