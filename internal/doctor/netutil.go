package doctor

import (
	"net/netip"
	"sort"
	"strings"
)

// talosNode is the key a TalosSource is called with for a node: its private
// IP when known (the Talos API is reached over the private network or through
// a control plane), else its public IP, else its name.
func talosNode(n NodeRef) string {
	switch {
	case n.PrivateIP != "":
		return n.PrivateIP
	case n.PublicIP != "":
		return n.PublicIP
	default:
		return n.Name
	}
}

// addrIP parses "10.0.1.5/24" or "10.0.1.5".
func addrIP(s string) (netip.Addr, bool) {
	if p, err := netip.ParsePrefix(s); err == nil {
		return p.Addr(), true
	}
	a, err := netip.ParseAddr(s)
	return a, err == nil
}

// privateLinks returns the names of the links that carry the node's private
// IP or an address inside cidr, sorted and unique.
func privateLinks(addrs []Address, privateIP, cidr string) []string {
	var prefix netip.Prefix
	hasPrefix := false
	if p, err := netip.ParsePrefix(cidr); err == nil {
		prefix, hasPrefix = p.Masked(), true
	}
	want, hasWant := netip.Addr{}, false
	if a, err := netip.ParseAddr(privateIP); err == nil {
		want, hasWant = a, true
	}
	seen := map[string]bool{}
	for _, a := range addrs {
		ip, ok := addrIP(a.CIDR)
		if !ok {
			continue
		}
		if (hasWant && ip == want) || (hasPrefix && prefix.Contains(ip)) {
			seen[a.Link] = true
		}
	}
	return sortedKeys(seen)
}

func sortedKeys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func linkNames(links []Link) string {
	names := make([]string, 0, len(links))
	for _, l := range links {
		names = append(names, l.Name)
	}
	sort.Strings(names)
	return strings.Join(names, ", ")
}

func findLink(links []Link, name string) (Link, bool) {
	for _, l := range links {
		if l.Name == name {
			return l, true
		}
	}
	return Link{}, false
}

func containsFold(list []string, s string) bool {
	for _, v := range list {
		if strings.EqualFold(strings.TrimSpace(v), s) {
			return true
		}
	}
	return false
}
