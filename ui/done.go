package ui

import (
	"fmt"
	"strings"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"
)

// doneScreen says where the kubeconfig and talosconfig are and what to run
// next.
type doneScreen struct {
	c *common
}

func newDone(c *common) *doneScreen { return &doneScreen{c: c} }

func (s *doneScreen) enter() tea.Cmd  { return nil }
func (s *doneScreen) capturing() bool { return false }

// doctorKey opens the doctor screen on the new cluster.
var doctorKey = key.NewBinding(key.WithKeys("d"), key.WithHelp("d", "run the doctor"))

func (s *doneScreen) help() keyHelp {
	q := s.c.keys.Enter
	q.SetHelp("enter", "quit")
	short := []key.Binding{q}
	if s.c.backend.Doctor != nil {
		short = append(short, doctorKey)
	}
	return keyHelp{short: short}
}

func (s *doneScreen) update(msg tea.Msg) tea.Cmd {
	k, ok := msg.(tea.KeyMsg)
	switch {
	case ok && key.Matches(k, s.c.keys.Enter):
		return tea.Quit
	case ok && key.Matches(k, doctorKey) && s.c.backend.Doctor != nil:
		return func() tea.Msg { return openDoctorMsg{} }
	}
	return nil
}

func (s *doneScreen) view() string {
	c, st := s.c, s.c.styles
	name := c.spec.Name
	config := ""
	if c.backend.SpecPath != "" && c.backend.SpecPath != "ohmytalos.yaml" {
		config = " --config " + c.backend.SpecPath
	}
	if c.backend.Sandbox {
		config += " --sandbox"
	}
	stateDir := "the state directory"
	if c.backend.Env != nil && c.backend.Env.State != nil {
		stateDir = c.backend.Env.State.Dir()
	}
	cmd := func(s string) string { return "  " + st.Accent.Render("$ "+s) + "\n" }
	var b strings.Builder
	b.WriteString(st.Title.Render("Cluster "+name+" is up") + "\n\n")
	if c.backend.Sandbox {
		b.WriteString(st.Warn.Render(wrap("Sandbox run: nothing was created on Hetzner; the kubeconfig points at fakes that stop with this process.", c.width)) + "\n\n")
	}
	b.WriteString(wrap(fmt.Sprintf("The kubeconfig and talosconfig are stored encrypted (age) in %s. Write them out when you need them (mode 0600):", stateDir), c.width) + "\n")
	b.WriteString(cmd("ohmytalos kubeconfig" + config + " --out kubeconfig"))
	b.WriteString(cmd("ohmytalos talosconfig" + config + " --out talosconfig"))
	b.WriteString("\nNext:\n")
	if c.backend.Doctor != nil {
		b.WriteString("  press d to run the doctor on the new cluster now\n")
	}
	if !c.backend.Sandbox {
		// A sandbox lives only as long as this process: these would
		// start a new, empty one.
		b.WriteString(cmd("kubectl --kubeconfig kubeconfig get nodes"))
		b.WriteString(cmd("ohmytalos doctor" + config))
		b.WriteString(cmd("ohmytalos kubeconfig" + config + " --merge"))
	} else {
		b.WriteString(st.Subtle.Render(wrap("For a sandbox that outlives the wizard, run \"ohmytalos sandbox serve\" and use plan, apply and doctor against it (see the README).", c.width)) + "\n")
	}
	b.WriteString("\n" + st.Subtle.Render(wrap("The spec is in "+c.backend.SpecPath+"; keep it in git. Run \"ohmytalos apply\" after editing it.", c.width)) + "\n")
	return b.String()
}
