package netplan

import (
	"fmt"
	"net/netip"
)

// rangeOf is one parsed range of the layout with the spec field it came from.
type rangeOf struct {
	field  string
	label  string // for messages: "subnet of pool worker", "network.pods"
	prefix netip.Prefix
	ok     bool // parsed; prefix is masked
}

// validator carries a Layout through its checks and collects findings.
type validator struct {
	l        Layout
	findings []Finding
	network  rangeOf
	subnets  []rangeOf
	pods     rangeOf
	services rangeOf
}

// newValidator parses every range of l once, recording parse findings in
// field order, so the checks can work on parsed values only.
func newValidator(l Layout) *validator {
	v := &validator{l: l}
	netField := l.NetworkField
	if netField == "" {
		netField = fieldNetwork
	}
	v.network = v.parse(netField, "network range", l.Network, "10.0.0.0/16")
	for i, s := range l.Subnets {
		field := s.Field
		if field == "" {
			field = fmt.Sprintf("subnets[%d]", i)
		}
		label := "subnet " + field
		if s.Name != "" {
			label = "subnet of pool " + s.Name
		}
		v.subnets = append(v.subnets, v.parse(field, label, s.CIDR, "10.0.1.0/24"))
	}
	v.pods = v.parse(fieldPods, "pod range", l.Pods, "10.42.0.0/16")
	v.services = v.parse(fieldServices, "service range", l.Services, "10.43.0.0/16")
	return v
}

// parse parses one CIDR value, recording a finding when it is empty, does not
// parse, or has host bits set (then the masked range is used for the checks).
func (v *validator) parse(field, label, value, example string) rangeOf {
	r := rangeOf{field: field, label: label}
	if value == "" {
		v.add(field, SeverityError,
			fmt.Sprintf("the %s is empty", label),
			fmt.Sprintf("set %s to a CIDR range, for example %s", field, example))
		return r
	}
	p, err := netip.ParsePrefix(value)
	if err != nil {
		v.add(field, SeverityError,
			fmt.Sprintf("the %s %q is not a CIDR range (address/prefix length)", label, value),
			fmt.Sprintf("write it like %s", example))
		return r
	}
	if m := p.Masked(); m != p {
		v.add(field, SeverityError,
			fmt.Sprintf("the %s %q has host bits set: a range must start at its network address, here %s", label, value, m.Addr()),
			fmt.Sprintf("use %s", m))
		p = m
	}
	r.prefix, r.ok = p, true
	return r
}

// add records one finding.
func (v *validator) add(field string, sev Severity, msg, fix string) {
	v.findings = append(v.findings, Finding{Field: field, Severity: sev, Message: msg, Fix: fix})
}

// usedExcept returns every parsed subnet, pod and service range except the
// one in skip, as strings for NextFreeSubnet.
func (v *validator) usedExcept(skip string) []string {
	var used []string
	for _, s := range v.subnets {
		if s.ok && s.field != skip {
			used = append(used, s.prefix.String())
		}
	}
	for _, r := range []rangeOf{v.pods, v.services} {
		if r.ok && r.field != skip {
			used = append(used, r.prefix.String())
		}
	}
	return used
}

// suggestInNetwork proposes a free block of the given size inside the network
// for the range in field, or says how to make room.
func (v *validator) suggestInNetwork(field string, bits int) string {
	if !v.network.ok || !v.network.prefix.Addr().Is4() {
		return fmt.Sprintf("pick a free /%d inside the network range", bits)
	}
	free, err := NextFreeSubnet(v.network.prefix.String(), v.usedExcept(field), bits)
	if err != nil {
		return fmt.Sprintf("widen %s (for example to 10.0.0.0/8) or use a smaller block than /%d", v.network.field, bits)
	}
	return "use " + free + " (the next free /" + fmt.Sprint(bits) + " in " + v.network.prefix.String() + ")"
}
