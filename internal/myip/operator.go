package myip

import (
	"fmt"
	"net/netip"
	"strings"
)

// OperatorKey is the spec field that names the operator's address instead
// of detecting it; OperatorFlag is the plan and apply flag that does the
// same and wins over the spec.
const (
	OperatorKey  = "firewall.operatorAddress"
	OperatorFlag = "--operator-address"
)

// Operator is the operator's address as the firewall must admit it,
// detected (Addresses.Operator) or named (ParseOperator).
type Operator struct {
	// Ranges are the addresses: a single address as a /32 or /128, a
	// named range as written (any address inside it may be the
	// operator's, so all of it must be admitted).
	Ranges []netip.Prefix
	// Sources are the firewall source ranges that admit them: an IPv4
	// address's /32, an IPv6 address's /64 (as for a detected one), a
	// named range itself. Sources[i] admits Ranges[i].
	Sources []string
}

// Operator is a's addresses as the firewall must admit them.
func (a Addresses) Operator() Operator {
	var out Operator
	for _, ip := range []netip.Addr{a.IPv4, a.IPv6} {
		if ip.IsValid() {
			out.Ranges = append(out.Ranges, netip.PrefixFrom(ip, ip.BitLen()))
		}
	}
	out.Sources = a.Sources()
	return out
}

// String lists the addresses, for messages: a single address bare.
func (o Operator) String() string {
	out := make([]string, len(o.Ranges))
	for i, r := range o.Ranges {
		out[i] = RangeString(r)
	}
	return strings.Join(out, ", ")
}

// RangeString is r as messages show an operator's address: a single
// address bare, a range as a CIDR.
func RangeString(r netip.Prefix) string {
	if r.IsSingleIP() {
		return r.Addr().String()
	}
	return r.String()
}

// ParseOperator reads the addresses the operator names (OperatorFlag,
// OperatorKey): IP addresses or CIDRs, separated by commas. The error
// says which entry is wrong and why; the caller names the field.
func ParseOperator(v string) (Operator, error) {
	var out Operator
	for _, raw := range strings.Split(v, ",") {
		raw = strings.TrimSpace(raw)
		if raw == "" {
			continue
		}
		if ip, err := netip.ParseAddr(raw); err == nil {
			if ip.Zone() != "" {
				return Operator{}, fmt.Errorf("%q has a zone, which a public address has not", raw)
			}
			ip = ip.Unmap()
			if ip.IsUnspecified() || ip.IsMulticast() {
				return Operator{}, fmt.Errorf("%q is not a host address", raw)
			}
			out.Ranges = append(out.Ranges, netip.PrefixFrom(ip, ip.BitLen()))
			out.Sources = append(out.Sources, Addresses{IPv4: v4(ip), IPv6: v6(ip)}.Sources()...)
			continue
		}
		p, err := netip.ParsePrefix(raw)
		if err != nil {
			return Operator{}, fmt.Errorf("%q is not an IP address or CIDR", raw)
		}
		p = p.Masked()
		out.Ranges = append(out.Ranges, p)
		out.Sources = append(out.Sources, p.String())
	}
	if len(out.Ranges) == 0 {
		return Operator{}, fmt.Errorf("%q names no address", v)
	}
	return out, nil
}

func v4(ip netip.Addr) netip.Addr {
	if ip.Is4() {
		return ip
	}
	return netip.Addr{}
}

func v6(ip netip.Addr) netip.Addr {
	if ip.Is6() {
		return ip
	}
	return netip.Addr{}
}
