package netplan

import (
	"errors"
	"fmt"
	"net/netip"
)

// reservedPerSubnet counts the addresses of a Hetzner cloud subnet no server
// can take: the network address, the subnet gateway (the first address, see
// the package comment) and the broadcast address.
const reservedPerSubnet = 3

// Hosts returns how many servers can get an address in the Hetzner subnet
// cidr: its size minus the network address, the gateway (first address) and
// the broadcast address. It returns 0 for a range that does not parse, is not
// IPv4, or is too small to hold a server (/31, /32).
func Hosts(cidr string) int {
	p, err := netip.ParsePrefix(cidr)
	if err != nil || !p.Addr().Is4() {
		return 0
	}
	n := (1 << (32 - p.Bits())) - reservedPerSubnet
	if n < 0 {
		return 0
	}
	return n
}

// NextFreeSubnet returns the first block of the given prefix length inside
// network that overlaps none of the used ranges, scanning from the start of
// network (e.g. the next free /24 of 10.0.0.0/16). Entries of used that do not
// parse are ignored: they cannot take any space.
func NextFreeSubnet(network string, used []string, prefix int) (string, error) {
	netw, err := netip.ParsePrefix(network)
	if err != nil {
		return "", fmt.Errorf("network %q is not a CIDR range (example: 10.0.0.0/16): %w", network, err)
	}
	if !netw.Addr().Is4() {
		return "", fmt.Errorf("network %q is not IPv4: Hetzner Networks only support IPv4", network)
	}
	netw = netw.Masked()
	if prefix < netw.Bits() || prefix > 32 {
		return "", fmt.Errorf("a /%d block does not fit in %s: pick a prefix length between /%d and /32", prefix, netw, netw.Bits())
	}
	taken := make([]netip.Prefix, 0, len(used))
	for _, u := range used {
		p, err := netip.ParsePrefix(u)
		if err != nil || !p.Addr().Is4() {
			continue
		}
		taken = append(taken, p.Masked())
	}
	block := uint64(1) << (32 - prefix)
	start, end := first(netw), last(netw)
	for cand := start; cand+block-1 <= end; {
		c := netip.PrefixFrom(addrOf(cand), prefix)
		next := cand + block
		blocked := false
		for _, t := range taken {
			if t.Overlaps(c) {
				blocked = true
				// Skip past the used range, to the next aligned block.
				if after := last(t) + 1; after > next {
					next = (after + block - 1) / block * block
				}
			}
		}
		if !blocked {
			return c.String(), nil
		}
		cand = next
	}
	return "", errors.New("no free /" + fmt.Sprint(prefix) + " left in " + netw.String() + ": widen the network range (e.g. to a /16) or free a subnet")
}

// first returns the first address of an IPv4 prefix as a number.
func first(p netip.Prefix) uint64 {
	b := p.Masked().Addr().As4()
	return uint64(b[0])<<24 | uint64(b[1])<<16 | uint64(b[2])<<8 | uint64(b[3])
}

// last returns the last (broadcast) address of an IPv4 prefix as a number.
func last(p netip.Prefix) uint64 {
	return first(p) + (uint64(1) << (32 - p.Bits())) - 1
}

// addrOf turns a number back into an IPv4 address.
func addrOf(n uint64) netip.Addr {
	return netip.AddrFrom4([4]byte{byte(n >> 24), byte(n >> 16), byte(n >> 8), byte(n)})
}

// contains reports whether outer fully contains inner (same family).
func contains(outer, inner netip.Prefix) bool {
	return outer.Addr().BitLen() == inner.Addr().BitLen() &&
		outer.Bits() <= inner.Bits() && outer.Contains(inner.Addr())
}

// rfc1918 returns the private IPv4 ranges a Hetzner Network must lie in.
func rfc1918() [3]netip.Prefix {
	return [3]netip.Prefix{
		netip.MustParsePrefix("10.0.0.0/8"),
		netip.MustParsePrefix("172.16.0.0/12"),
		netip.MustParsePrefix("192.168.0.0/16"),
	}
}

// isPrivate reports whether p lies entirely inside one RFC1918 range.
func isPrivate(p netip.Prefix) bool {
	for _, r := range rfc1918() {
		if contains(r, p) {
			return true
		}
	}
	return false
}

// prefixFor returns the longest prefix length whose Hetzner subnet still has
// room for n servers, or 0 when even the whole IPv4 space would not do.
func prefixFor(n int) int {
	for bits := 30; bits >= 1; bits-- {
		if (1<<(32-bits))-reservedPerSubnet >= n {
			return bits
		}
	}
	return 0
}
