package ui

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/charmbracelet/bubbles/key"
	"github.com/charmbracelet/bubbles/textinput"
	tea "github.com/charmbracelet/bubbletea"

	"github.com/ohmytalos/ohmytalos/internal/pricing"
	"github.com/ohmytalos/ohmytalos/internal/spec"
	"github.com/ohmytalos/ohmytalos/ui/common"
	"github.com/ohmytalos/ohmytalos/ui/components"
)

// typePicker chooses a server type from the catalog: vCPU, RAM, disk,
// price in the pool's location, and whether it can be ordered there.
type typePicker struct {
	location string
	types    []pricing.ServerType
	cursor   int
	err      string
}

// openPicker opens the server type picker for the selected row.
func (s *poolsScreen) openPicker() {
	if s.c.catalog == nil {
		s.notice = "prices are not loaded yet: the type picker needs the catalog"
		return
	}
	loc, current := s.c.spec.ControlPlane.Location, s.c.spec.ControlPlane.ServerType
	if s.cursor > 0 {
		p := s.c.spec.Pools[s.cursor-1]
		loc, current = p.Location, p.ServerType
	}
	if loc == "" {
		loc = s.c.spec.Location
	}
	tp := &typePicker{location: loc}
	for _, t := range s.c.catalog.ServerTypes {
		tp.types = append(tp.types, t)
	}
	sort.Slice(tp.types, func(i, j int) bool {
		a, b := tp.types[i], tp.types[j]
		if a.Architecture != b.Architecture {
			return a.Architecture > b.Architecture // x86 first
		}
		pa, aok := a.Prices[loc]
		pb, bok := b.Prices[loc]
		if aok != bok {
			return aok // types with no price here go last
		}
		if pa.Monthly != pb.Monthly {
			return pa.Monthly < pb.Monthly
		}
		return a.Name < b.Name
	})
	for i, t := range tp.types {
		if t.Name == current {
			tp.cursor = i
		}
	}
	s.picker = tp
}

func (s *poolsScreen) pickerKey(k tea.KeyMsg) tea.Cmd {
	km, tp := s.Keys, s.picker
	switch {
	case key.Matches(k, km.Esc):
		s.picker = nil
	case key.Matches(k, km.Up):
		tp.cursor = max(tp.cursor-1, 0)
	case key.Matches(k, km.Down):
		tp.cursor = min(tp.cursor+1, len(tp.types)-1)
	case key.Matches(k, km.Enter) && len(tp.types) > 0:
		name := tp.types[tp.cursor].Name
		if err := s.c.catalog.CheckServerType(name, tp.location, ""); err != nil {
			tp.err = err.Error()
			return nil
		}
		i := s.cursor - 1
		s.c.editSpec(func(sp *spec.Spec) {
			if i < 0 {
				sp.ControlPlane.ServerType = name
			} else {
				sp.Pools[i].ServerType = name
			}
		})
		s.picker = nil
	}
	return nil
}

func (tp *typePicker) view(st Styles, width, height int) string {
	var b strings.Builder
	b.WriteString(st.Bold.Render("server type in "+tp.location) + "\n")
	b.WriteString(st.Subtle.Render(fmt.Sprintf("  %-8s %-5s %4s %6s %6s %9s  %s", "type", "arch", "vCPU", "RAM", "disk", "€/month", "orderable")) + "\n")
	rows := max(height-4, 3)
	start := 0
	if tp.cursor >= rows {
		start = tp.cursor - rows + 1
	}
	for i := start; i < len(tp.types) && i < start+rows; i++ {
		t := tp.types[i]
		price := "-"
		if p, ok := t.Prices[tp.location]; ok {
			price = p.Monthly.Format(2)
		}
		order := st.Good.Render("yes")
		switch {
		case t.Deprecated:
			order = st.Warn.Render("deprecated")
		case !t.Available[tp.location]:
			order = st.Bad.Render("no")
		}
		arch := "amd64"
		if t.Architecture == "arm" {
			arch = "arm64"
		}
		line := fmt.Sprintf("%-8s %-5s %4d %5gG %5dG %9s  ", t.Name, arch, t.Cores, t.MemoryGB, t.DiskGB, price)
		if i == tp.cursor {
			b.WriteString(st.Accent.Render("› ") + st.Selected.Render(line) + order + "\n")
		} else {
			b.WriteString("  " + line + order + "\n")
		}
	}
	if tp.err != "" {
		b.WriteString(st.Bad.Render(common.Wrap(tp.err, width)) + "\n")
	}
	return b.String()
}

// poolForm edits a pool's name, count, subnet and volume.
type poolForm struct {
	index  int
	inputs []textinput.Model
	focus  int
	err    string
}

func poolFormLabels() []string { return []string{"name", "servers", "subnet", "volume GB"} }

func newPoolForm(c *shared, styles common.Styles, index int) *poolForm {
	p := c.spec.Pools[index]
	f := &poolForm{index: index}
	for _, v := range []string{p.Name, strconv.Itoa(p.Count), p.Subnet, strconv.Itoa(p.VolumeSize)} {
		f.inputs = append(f.inputs, components.NewInput(styles, v, "", 18))
	}
	f.inputs[0].Focus()
	return f
}

func (s *poolsScreen) formKey(k tea.KeyMsg) tea.Cmd {
	km, f := s.Keys, s.form
	switch {
	case key.Matches(k, km.Esc):
		s.form = nil
		return nil
	case key.Matches(k, km.Tab), key.Matches(k, km.ShiftTab):
		f.inputs[f.focus].Blur()
		step := 1
		if key.Matches(k, km.ShiftTab) {
			step = len(f.inputs) - 1
		}
		f.focus = (f.focus + step) % len(f.inputs)
		f.inputs[f.focus].Focus()
		return nil
	case key.Matches(k, km.Enter):
		if err := s.saveForm(); err != nil {
			f.err = err.Error()
			return nil
		}
		s.form = nil
		return nil
	}
	var cmd tea.Cmd
	f.inputs[f.focus], cmd = f.inputs[f.focus].Update(k)
	return cmd
}

// saveForm checks the form and writes it into the pool.
func (s *poolsScreen) saveForm() error {
	f := s.form
	name := strings.TrimSpace(f.inputs[0].Value())
	if name == "" {
		return fmt.Errorf("the pool name is empty: type a short name like worker or storage")
	}
	for i, p := range s.c.spec.Pools {
		if i != f.index && p.Name == name {
			return fmt.Errorf("pool %q already exists: pick another name", name)
		}
	}
	count, err := strconv.Atoi(strings.TrimSpace(f.inputs[1].Value()))
	if err != nil || count < 1 {
		return fmt.Errorf("servers must be a whole number of at least 1")
	}
	vol, err := strconv.Atoi(strings.TrimSpace(f.inputs[3].Value()))
	if err != nil || vol < 0 {
		return fmt.Errorf("volume GB must be 0 (no volume) or a whole number of GB")
	}
	i, subnet := f.index, strings.TrimSpace(f.inputs[2].Value())
	s.c.editSpec(func(sp *spec.Spec) {
		p := &sp.Pools[i]
		p.Name, p.Count, p.Subnet, p.VolumeSize = name, count, subnet, vol
	})
	return nil
}

func (f *poolForm) view(st Styles) string {
	var b strings.Builder
	b.WriteString(st.Bold.Render("edit pool") + "\n")
	for i, l := range poolFormLabels() {
		cur := "  "
		if i == f.focus {
			cur = st.Accent.Render("› ")
		}
		b.WriteString(cur + st.Label.Render(l) + f.inputs[i].View() + "\n")
	}
	if f.err != "" {
		b.WriteString(st.Bad.Render(f.err) + "\n")
	}
	return b.String()
}
