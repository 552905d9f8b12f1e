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

func (s *doneScreen) help() keyHelp {
	q := s.c.keys.Enter
	q.SetHelp("enter", "quit")
	return keyHelp{short: []key.Binding{q}}
}

func (s *doneScreen) update(msg tea.Msg) tea.Cmd {
	if k, ok := msg.(tea.KeyMsg); ok && key.Matches(k, s.c.keys.Enter) {
		return tea.Quit
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
	b.WriteString(cmd("kubectl --kubeconfig kubeconfig get nodes"))
	b.WriteString(cmd("ohmytalos doctor" + config))
	b.WriteString(cmd("ohmytalos kubeconfig" + config + " --merge"))
	b.WriteString("\n" + st.Subtle.Render(wrap("The spec is in "+c.backend.SpecPath+"; keep it in git. Run \"ohmytalos apply\" after editing it.", c.width)) + "\n")
	return b.String()
}
