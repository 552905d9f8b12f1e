package ui

import (
	"fmt"
	"strings"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"

	"github.com/ohmytalos/ohmytalos/internal/netplan"
	"github.com/ohmytalos/ohmytalos/internal/spec"
	"github.com/ohmytalos/ohmytalos/ui/common"
	"github.com/ohmytalos/ohmytalos/ui/components"
)

// poolsScreen lists the control plane and the node pools; counts, server
// types, volumes and pools are edited in place and the cost panel is
// recomputed on every keystroke.
type poolsScreen struct {
	// page is the screen's own copy of the size, styles and keys.
	page
	c       *shared
	cursor  int // 0: control plane, i: pools[i-1]
	confirm components.Confirm
	picker  *typePicker
	form    *poolForm
	notice  string
}

func newPools(c *shared, com common.Common) *poolsScreen { return &poolsScreen{c: c, page: page{com}} }

func (s *poolsScreen) enter() tea.Cmd { return nil }

func (s *poolsScreen) capturing() bool { return s.form != nil }

func (s *poolsScreen) help() keyHelp {
	km := s.Keys
	switch {
	case s.confirm.Open():
		return keyHelp{short: s.confirm.Help(km)}
	case s.picker != nil:
		sel := km.Enter
		sel.SetHelp("enter", "use this type")
		return keyHelp{short: []key.Binding{km.Up, km.Down, sel, km.Esc}}
	case s.form != nil:
		save := km.Enter
		save.SetHelp("enter", "save pool")
		return keyHelp{short: []key.Binding{km.Tab, save, km.Esc}}
	}
	enter := km.Enter
	enter.SetHelp("enter", "review")
	short := []key.Binding{km.Up, km.Down, km.Plus, km.Minus, km.Type, km.Add, km.Edit, km.Remove, enter}
	return keyHelp{short: short, full: [][]key.Binding{{km.Up, km.Down, km.Plus, km.Minus}, {km.Type, km.VolUp, km.VolDown}, {km.Add, km.Edit, km.Remove, enter}}}
}

// rows is the number of table rows: the control plane and each pool.
func (s *poolsScreen) rows() int { return 1 + len(s.c.spec.Pools) }

func (s *poolsScreen) update(msg tea.Msg) tea.Cmd {
	k, ok := msg.(tea.KeyMsg)
	if !ok {
		return nil
	}
	switch {
	case s.confirm.Open():
		if done, yes := s.confirm.Answer(k, s.Keys); done && yes {
			s.remove()
		}
		return nil
	case s.picker != nil:
		return s.pickerKey(k)
	case s.form != nil:
		return s.formKey(k)
	}
	return s.listKey(k)
}

func (s *poolsScreen) listKey(k tea.KeyMsg) tea.Cmd {
	km, sp := s.Keys, s.c.spec
	s.notice = ""
	switch {
	case key.Matches(k, km.Up):
		s.cursor = max(s.cursor-1, 0)
	case key.Matches(k, km.Down):
		s.cursor = min(s.cursor+1, s.rows()-1)
	case key.Matches(k, km.Plus):
		s.setCount(s.count() + s.countStep())
	case key.Matches(k, km.Minus):
		s.setCount(s.count() - s.countStep())
	case key.Matches(k, km.VolUp, km.VolDown) && s.cursor > 0:
		i, step := s.cursor-1, -10
		if key.Matches(k, km.VolUp) {
			step = 10
		}
		s.c.editSpec(func(sp *spec.Spec) { sp.Pools[i].VolumeSize = max(sp.Pools[i].VolumeSize+step, 0) })
	case key.Matches(k, km.Type):
		s.openPicker()
	case key.Matches(k, km.Add):
		s.add()
	case key.Matches(k, km.Edit) && s.cursor > 0:
		s.form = newPoolForm(s.c, s.Styles, s.cursor-1)
	case key.Matches(k, km.Remove) && s.cursor > 0:
		p := sp.Pools[s.cursor-1]
		s.confirm.Ask(fmt.Sprintf("Remove pool %q (%d × %s)? apply does not delete servers already created for it: drain and delete them yourself.", p.Name, p.Count, p.ServerType))
	case key.Matches(k, km.Remove):
		s.notice = "the control plane cannot be removed"
	case key.Matches(k, km.Enter):
		return navCmd(scrReview)
	}
	return nil
}

// countStep keeps the control plane odd (an etcd quorum) and moves pools
// one server at a time.
func (s *poolsScreen) countStep() int {
	if s.cursor == 0 {
		return 2
	}
	return 1
}

func (s *poolsScreen) count() int {
	if s.cursor == 0 {
		return s.c.spec.ControlPlane.Count
	}
	return s.c.spec.Pools[s.cursor-1].Count
}

// setCount changes the selected row's server count and recomputes cost
// and address findings.
func (s *poolsScreen) setCount(n int) {
	if s.cursor == 0 {
		if n < 1 {
			s.notice = "a cluster needs at least one control plane (three for HA)"
			return
		}
		s.c.editSpec(func(sp *spec.Spec) { sp.ControlPlane.Count = n })
		return
	}
	if n < 1 {
		s.notice = "a pool needs at least one server: remove the pool instead (d)"
		return
	}
	i := s.cursor - 1
	s.c.editSpec(func(sp *spec.Spec) { sp.Pools[i].Count = n })
}

// add appends a pool in the next free /24 of the network.
func (s *poolsScreen) add() {
	sp := s.c.spec
	used := []string{sp.ControlPlane.Subnet}
	names := map[string]bool{}
	for _, p := range sp.Pools {
		used = append(used, p.Subnet)
		names[p.Name] = true
	}
	subnet, err := netplan.NextFreeSubnet(sp.Network.CIDR, used, 24)
	if err != nil {
		s.notice = "no free subnet for a new pool: " + err.Error()
		return
	}
	name := "pool"
	for i := len(sp.Pools) + 1; names[name]; i++ {
		name = fmt.Sprintf("pool%d", i)
	}
	lb := true
	pool := spec.Pool{Name: name, ServerType: spec.DefaultWorkerType, Count: 1, Subnet: subnet,
		Location: sp.Location, LoadBalancer: &lb, Schematic: "worker"}
	s.c.editSpec(func(sp *spec.Spec) { sp.Pools = append(sp.Pools, pool) })
	s.cursor = len(s.c.spec.Pools)
}

// remove deletes the selected pool (after confirmation).
func (s *poolsScreen) remove() {
	if s.cursor == 0 {
		return
	}
	i := s.cursor
	s.c.editSpec(func(sp *spec.Spec) { sp.Pools = append(sp.Pools[:i-1:i-1], sp.Pools[i:]...) })
	s.cursor = min(s.cursor, s.rows()-1)
}

func (s *poolsScreen) view() string {
	c, st := s.c, s.Styles
	var b strings.Builder
	b.WriteString(header(s.Common, "Node pools", "control plane and worker pools; net prices per month") + "\n")
	table := s.table()
	wide := s.Width >= 90
	panelW := 40
	if wide {
		panelW = max(s.Width-lipgloss.Width(table)-3, 30)
	}
	panel := components.CostPanel(st, c.cost(), min(panelW, 64), wide && s.Height >= 30)
	if s.Height >= 30 {
		table += "\n\n" + s.details()
	}
	switch {
	case s.picker != nil:
		b.WriteString(s.picker.view(st, s.Width, s.Height-3))
		return b.String()
	case s.form != nil:
		b.WriteString(common.JoinSides(s.form.view(st), panel, s.Width, 3))
		return b.String()
	}
	b.WriteString(common.JoinSides(table, panel, s.Width, 3) + "\n")
	if s.confirm.Open() {
		b.WriteString(s.confirm.View(st, s.Width) + "\n")
	}
	if s.notice != "" {
		b.WriteString(st.Warn.Render(s.notice) + "\n")
	}
	return b.String()
}

// table renders the pools with a marker on the selected row and address
// findings of the selected pool.
func (s *poolsScreen) table() string {
	c, st := s.c, s.Styles
	sp := c.spec
	var b strings.Builder
	header := fmt.Sprintf("  %-13s %-7s %3s %-14s %4s %9s", "pool", "type", "n", "subnet", "vol", "€/month")
	b.WriteString(st.Subtle.Render(header) + "\n")
	row := func(i int, name, typ string, n int, subnet string, vol int, field string) {
		price := "…"
		if g, ok := components.EstimateGroup(c.estimate, name); ok {
			price = g.MonthlyNet.Format(2)
		}
		volText := "-"
		if vol > 0 {
			volText = fmt.Sprintf("%dG", vol)
		}
		mark := " "
		if len(c.findingsFor(field)) > 0 {
			mark = st.Bad.Render("!")
		}
		line := fmt.Sprintf("%-13s %-7s %3d %-14s %4s %9s", common.Truncate(name, 13), common.Truncate(typ, 7), n, common.Truncate(subnet, 14), volText, price)
		if i == s.cursor {
			b.WriteString(st.Accent.Render("›") + mark + st.Selected.Render(line) + "\n")
		} else {
			b.WriteString(" " + mark + line + "\n")
		}
	}
	row(0, "control plane", sp.ControlPlane.ServerType, sp.ControlPlane.Count, sp.ControlPlane.Subnet, 0, "controlPlane.subnet")
	for i, p := range sp.Pools {
		row(i+1, p.Name, p.ServerType, p.Count, p.Subnet, p.VolumeSize, fmt.Sprintf("pools[%d].subnet", i))
	}
	field := "controlPlane.subnet"
	if s.cursor > 0 {
		field = fmt.Sprintf("pools[%d].subnet", s.cursor-1)
	}
	for _, f := range c.findingsFor(field) {
		b.WriteString(st.Bad.Render(common.Wrap("! "+f.Message+" "+f.Fix, 58)) + "\n")
	}
	return strings.TrimRight(b.String(), "\n")
}

// details describes the selected row beyond the table's columns.
func (s *poolsScreen) details() string {
	c, st := s.c, s.Styles
	sp := c.spec
	kv := func(k, v string) string { return st.Label.Render(k) + v + "\n" }
	var b strings.Builder
	if s.cursor == 0 {
		cp := sp.ControlPlane
		b.WriteString(st.Bold.Render("control plane") + "\n")
		b.WriteString(kv("location", cp.Location))
		b.WriteString(kv("arch", spec.Arch(cp.ServerType)))
		b.WriteString(kv("endpoint", sp.Endpoint.Mode+" "+cp.VIP))
		name, _ := sp.SchematicFor(spec.RoleControlPlane)
		b.WriteString(kv("schematic", name))
		return b.String()
	}
	p := sp.Pools[s.cursor-1]
	b.WriteString(st.Bold.Render("pool "+p.Name) + "\n")
	b.WriteString(kv("location", p.Location))
	b.WriteString(kv("arch", spec.Arch(p.ServerType)))
	lb := "no"
	if p.InLoadBalancer() {
		lb = "yes (ingress target)"
	}
	b.WriteString(kv("load balancer", lb))
	b.WriteString(kv("storage", fmt.Sprint(p.Storage)))
	b.WriteString(kv("schematic", p.Schematic))
	if len(p.Taints) > 0 {
		b.WriteString(kv("taints", strings.Join(p.Taints, ", ")))
	}
	return b.String()
}
