package components

import (
	"fmt"
	"net/netip"
	"strings"

	"github.com/charmbracelet/lipgloss"

	"github.com/ohmytalos/ohmytalos/internal/netplan"
	"github.com/ohmytalos/ohmytalos/ui/common"
)

// SubnetMap draws the network range as a row of /24 cells: each cell shows
// which subnet (C for the control plane, 1-9 and a-z for pools), pod (p) or
// service (s) range uses it, "!" where two overlap and "·" where it is free;
// a legend lists each range with its size and the VIP.
func SubnetMap(st common.Styles, l netplan.Layout, width int) string {
	var b strings.Builder
	b.WriteString(st.Bold.Render("address map") + "\n")
	network, err := netip.ParsePrefix(strings.TrimSpace(l.Network))
	if err != nil || !network.Addr().Is4() {
		b.WriteString(st.Warn.Render("the network range does not parse as IPv4 CIDR: no map") + "\n")
		return b.String()
	}
	network = network.Masked()
	type marked struct {
		mark  string
		label string
		p     netip.Prefix
		ok    bool
	}
	var ranges []marked
	for i, sn := range l.Subnets {
		mark := "C"
		if i > 0 {
			mark = poolMark(i)
		}
		p, err := netip.ParsePrefix(strings.TrimSpace(sn.CIDR))
		ranges = append(ranges, marked{mark, sn.Name, p.Masked(), err == nil})
	}
	for _, cr := range []struct{ mark, label, cidr string }{{"p", "pods", l.Pods}, {"s", "services", l.Services}} {
		p, err := netip.ParsePrefix(strings.TrimSpace(cr.cidr))
		ranges = append(ranges, marked{cr.mark, cr.label, p.Masked(), err == nil})
	}

	cellBits := max(24, network.Bits())
	cells := 1 << (cellBits - network.Bits())
	shown := min(cells, max(width-10, 8))
	base := network.Addr().As4()
	start := uint32(base[0])<<24 | uint32(base[1])<<16 | uint32(base[2])<<8 | uint32(base[3])
	var row strings.Builder
	for c := 0; c < shown; c++ {
		a := start + uint32(c)<<(32-cellBits)
		cell := netip.PrefixFrom(netip.AddrFrom4([4]byte{byte(a >> 24), byte(a >> 16), byte(a >> 8), byte(a)}), cellBits)
		mark := ""
		for _, r := range ranges {
			if r.ok && r.p.Overlaps(cell) {
				if mark != "" {
					mark = "!"
					break
				}
				mark = r.mark
			}
		}
		switch mark {
		case "":
			row.WriteString(st.Subtle.Render("·"))
		case "!":
			row.WriteString(st.Bad.Render("!"))
		default:
			row.WriteString(st.Accent.Render(mark))
		}
	}
	more := ""
	if shown < cells {
		more = st.Subtle.Render(fmt.Sprintf("…+%d", cells-shown))
	}
	b.WriteString(st.Subtle.Render(fmt.Sprintf("%s: %d × /%d", network, cells, cellBits)) + "\n")
	b.WriteString("[" + row.String() + "]" + more + "\n")
	var legend []string
	for _, r := range ranges {
		if !r.ok {
			legend = append(legend, st.Warn.Render(r.mark+" "+r.label+" (invalid)"))
			continue
		}
		text := fmt.Sprintf("%s %s %s", st.Accent.Render(r.mark), r.label, r.p)
		if r.mark == "p" || r.mark == "s" {
			if !network.Overlaps(r.p) {
				text += st.Subtle.Render(" outside")
			}
		} else {
			text += st.Subtle.Render(fmt.Sprintf(" %d hosts", netplan.Hosts(r.p.String())))
		}
		if r.mark == "C" && l.VIP != "" {
			text += " VIP " + l.VIP
		}
		legend = append(legend, text)
	}
	b.WriteString(legendColumns(legend, width))
	return b.String()
}

// poolMark is the map letter of the i-th subnet (1-based pools).
func poolMark(i int) string {
	const marks = "123456789abcdefghijklmnoqrtuvwxyz"
	if i-1 < len(marks) {
		return string(marks[i-1])
	}
	return "+"
}

// legendColumns lays legend entries out in as many columns as fit.
func legendColumns(items []string, width int) string {
	colW := 0
	for _, it := range items {
		colW = max(colW, lipgloss.Width(it)+2)
	}
	cols := max(1, min(width/max(colW, 1), 3))
	var b strings.Builder
	for i, it := range items {
		pad := colW - lipgloss.Width(it)
		b.WriteString(it)
		if (i+1)%cols == 0 || i == len(items)-1 {
			b.WriteString("\n")
		} else {
			b.WriteString(strings.Repeat(" ", pad))
		}
	}
	return b.String()
}
