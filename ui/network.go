package ui

import (
	"fmt"
	"strings"

	"github.com/charmbracelet/bubbles/key"
	"github.com/charmbracelet/bubbles/textinput"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"

	"github.com/ohmytalos/ohmytalos/internal/netplan"
	"github.com/ohmytalos/ohmytalos/internal/spec"
	"github.com/ohmytalos/ohmytalos/ui/common"
	"github.com/ohmytalos/ohmytalos/ui/components"
)

// netField is one input of the network screen, bound to a spec field.
type netField struct {
	field, label, placeholder string
	get                       func(*spec.Spec) string
	set                       func(*spec.Spec, string)
}

func netFields() []netField {
	return []netField{
		{"network.cidr", "network", "10.0.0.0/16",
			func(s *spec.Spec) string { return s.Network.CIDR }, func(s *spec.Spec, v string) { s.Network.CIDR = v }},
		{"network.pods", "pods", "10.42.0.0/16",
			func(s *spec.Spec) string { return s.Network.Pods }, func(s *spec.Spec, v string) { s.Network.Pods = v }},
		{"network.services", "services", "10.43.0.0/16",
			func(s *spec.Spec) string { return s.Network.Services }, func(s *spec.Spec, v string) { s.Network.Services = v }},
		{"controlPlane.subnet", "cp subnet", "10.0.1.0/24",
			func(s *spec.Spec) string { return s.ControlPlane.Subnet }, func(s *spec.Spec, v string) { s.ControlPlane.Subnet = v }},
		{"controlPlane.vip", "API VIP", "10.0.1.100",
			func(s *spec.Spec) string { return s.ControlPlane.VIP }, func(s *spec.Spec, v string) { s.ControlPlane.VIP = v }},
		firewallField(),
	}
}

// networkScreen edits the address layout; netplan findings are shown
// beside each field on every keystroke, with a map of the range.
type networkScreen struct {
	// page is the screen's own copy of the size, styles and keys.
	page
	c      *shared
	fields []netField
	inputs []textinput.Model
	focus  int
	notice string
	access accessState
}

func newNetwork(c *shared, com common.Common) *networkScreen {
	s := &networkScreen{c: c, page: page{com}, fields: netFields()}
	for _, f := range s.fields {
		s.inputs = append(s.inputs, components.NewInput(com.Styles, f.get(c.spec), f.placeholder, 18))
	}
	s.inputs[0].Focus()
	return s
}

func (s *networkScreen) enter() tea.Cmd {
	// Other screens may have changed the spec (pools add subnets).
	for i, f := range s.fields {
		if s.inputs[i].Value() != f.get(s.c.spec) {
			s.inputs[i].SetValue(f.get(s.c.spec))
		}
	}
	return s.startDetect()
}

func (s *networkScreen) capturing() bool { return true }

func (s *networkScreen) help() keyHelp {
	km := s.Keys
	enter := km.Enter // what enter does here: next field, then continue
	if s.focus < len(s.inputs)-1 {
		enter.SetHelp("enter", "next field")
	}
	return keyHelp{short: []key.Binding{km.Tab, km.ShiftTab, enter, km.Next}}
}

func (s *networkScreen) update(msg tea.Msg) tea.Cmd {
	if m, ok := msg.(OperatorAddressMsg); ok {
		s.detected(m)
		return nil
	}
	k, ok := msg.(tea.KeyMsg)
	if !ok {
		return nil
	}
	km := s.Keys
	switch {
	case key.Matches(k, km.Tab):
		s.setFocus((s.focus + 1) % len(s.inputs))
		return nil
	case key.Matches(k, km.ShiftTab):
		s.setFocus((s.focus + len(s.inputs) - 1) % len(s.inputs))
		return nil
	case key.Matches(k, km.Enter):
		if s.focus < len(s.inputs)-1 {
			s.setFocus(s.focus + 1)
			return nil
		}
		if n := s.c.networkErrors(); n > 0 {
			s.notice = fmt.Sprintf("%d problem(s) left: fix them before you continue", n)
			return nil
		}
		return navCmd(scrPools)
	}
	var cmd tea.Cmd
	s.inputs[s.focus], cmd = s.inputs[s.focus].Update(k)
	field, value := s.fields[s.focus], strings.TrimSpace(s.inputs[s.focus].Value())
	s.c.editSpec(func(sp *spec.Spec) { field.set(sp, value) })
	s.notice = ""
	return cmd
}

func (s *networkScreen) setFocus(i int) {
	s.inputs[s.focus].Blur()
	s.focus = i
	s.inputs[i].Focus()
}

func (s *networkScreen) view() string {
	c, st := s.c, s.Styles
	var b strings.Builder
	b.WriteString(header(s.Common, "Network layout", "Hetzner private network, subnets, Kubernetes ranges, API VIP") + "\n")
	leftW := 2 + 14 + 19
	beside := s.Width-leftW-1 >= 40
	maxLines := 2
	if s.Height >= 30 {
		maxLines = 4
	}
	for i, f := range s.fields {
		cur := "  "
		if i == s.focus {
			cur = st.Accent.Render("› ")
		}
		left := cur + st.Label.Render(f.label) + s.inputs[i].View()
		fs := c.findingsFor(f.field)
		if beside {
			right := s.findingText(fs, s.Width-leftW-1, maxLines)
			b.WriteString(lipgloss.JoinHorizontal(lipgloss.Top, st.App.Width(leftW).Render(left), " ", right) + "\n")
			continue
		}
		if len(fs) == 0 {
			b.WriteString(st.App.Width(leftW).Render(left) + " " + st.Good.Render("✓") + "\n")
			continue
		}
		b.WriteString(left + "\n" + common.Indent(s.findingText(fs, s.Width-4, maxLines), 4) + "\n")
	}
	var other []netplan.Finding
	for _, f := range c.findings {
		if !s.isField(f.Field) {
			other = append(other, f)
		}
	}
	if len(other) > 0 {
		b.WriteString(st.Warn.Render(common.Wrap(fmt.Sprintf("%d finding(s) on pool subnets (see the pools screen): %s: %s", len(other), other[0].Field, other[0].Message), s.Width)) + "\n")
	}
	if note := s.accessNote(); note != "" {
		b.WriteString(note + "\n")
	}
	if s.notice != "" {
		b.WriteString(st.Bad.Render(s.notice) + "\n")
	}
	b.WriteString("\n")
	layout, _ := c.adapt()
	b.WriteString(components.SubnetMap(st, layout, s.Width))
	return b.String()
}

func (s *networkScreen) isField(field string) bool {
	for _, f := range s.fields {
		if f.field == field {
			return true
		}
	}
	return false
}

// findingText renders a field's findings in width columns, at most
// maxLines lines per finding (the fix included when there is room).
func (s *networkScreen) findingText(fs []netplan.Finding, width, maxLines int) string {
	st := s.Styles
	if len(fs) == 0 {
		return st.Good.Render("✓")
	}
	var out []string
	for _, f := range fs {
		style, glyph := st.Bad, "✗ "
		if f.Severity == netplan.SeverityWarning {
			style, glyph = st.Warn, "! "
		}
		text := glyph + f.Message
		if f.Fix != "" {
			text += " Fix: " + f.Fix
		}
		lines := strings.Split(lipgloss.NewStyle().Width(width).Render(text), "\n")
		if len(lines) > maxLines {
			lines = lines[:maxLines]
			lines[maxLines-1] = strings.TrimRight(lines[maxLines-1], " ") + "…"
		}
		for _, l := range lines {
			out = append(out, style.Render(strings.TrimRight(l, " ")))
		}
		if maxLines == 1 {
			break
		}
	}
	return strings.Join(out, "\n")
}
