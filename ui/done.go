package ui

import (
	"fmt"
	"github.com/ohmytalos/ohmytalos/steps"
	"strings"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"

	"github.com/ohmytalos/ohmytalos/internal/addons"
	"github.com/ohmytalos/ohmytalos/internal/engine"
	"github.com/ohmytalos/ohmytalos/ui/common"
)

// doneScreen says whether the cluster is ready to use (every node Ready,
// the add-ons ready, as the add-ons step reported) or exactly what is
// missing, where the kubeconfig and talosconfig are and what to run next.
type doneScreen struct {
	// page is the screen's own copy of the size, styles and keys.
	page
	c     *shared
	ready readiness
}

func newDone(c *shared, com common.Common) *doneScreen { return &doneScreen{c: c, page: page{com}} }

func (s *doneScreen) enter() tea.Cmd  { return nil }
func (s *doneScreen) capturing() bool { return false }

// doctorKey opens the doctor screen on the new cluster.
var doctorKey = key.NewBinding(key.WithKeys("d"), key.WithHelp("d", "run the doctor"))

func (s *doneScreen) help() keyHelp {
	q := s.Keys.Enter
	q.SetHelp("enter", "quit")
	short := []key.Binding{q}
	if s.c.backend.Doctor != nil {
		short = append(short, doctorKey)
	}
	return keyHelp{short: short}
}

func (s *doneScreen) update(msg tea.Msg) tea.Cmd {
	if ev, ok := msg.(RunEventMsg); ok {
		s.ready.add(ev.Event)
		return nil
	}
	k, ok := msg.(tea.KeyMsg)
	switch {
	case ok && key.Matches(k, s.Keys.Enter):
		return tea.Quit
	case ok && key.Matches(k, doctorKey) && s.c.backend.Doctor != nil:
		return func() tea.Msg { return openDoctorMsg{} }
	}
	return nil
}

func (s *doneScreen) view() string {
	c, st := s.c, s.Styles
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
	b.WriteString(s.outcome() + "\n")
	if c.backend.Sandbox {
		b.WriteString(st.Warn.Render(common.Wrap("Sandbox run: nothing was created on Hetzner; the kubeconfig points at fakes that stop with this process.", s.Width)) + "\n\n")
	}
	use := "Merge the kubeconfig into yours for kubectl (its context becomes the current one), or write the files out (mode 0600):"
	if c.backend.Sandbox {
		use = "Write them out when you need them (mode 0600):"
	}
	b.WriteString(common.Wrap(fmt.Sprintf("The kubeconfig and talosconfig are stored encrypted (age) in %s. %s", stateDir, use), s.Width) + "\n")
	if !c.backend.Sandbox {
		b.WriteString(cmd("ohmytalos kubeconfig" + config + " --merge"))
	}
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
	} else {
		b.WriteString(st.Subtle.Render(common.Wrap("For a sandbox that outlives the wizard, run \"ohmytalos sandbox serve\" and use plan, apply and doctor against it (see the README).", s.Width)) + "\n")
	}
	b.WriteString("\n" + st.Subtle.Render(common.Wrap("The spec is in "+c.backend.SpecPath+"; keep it in git. Run \"ohmytalos apply\" after editing it.", s.Width)) + "\n")
	return b.String()
}

// outcome is the title and what the add-ons step said: ready to use, or
// what is missing (its error names it, and the nodes and workloads whose
// last report was not ready), or that it has not run.
func (s *doneScreen) outcome() string {
	c, st, r := s.c, s.Styles, &s.ready
	name := c.spec.Name
	var b strings.Builder
	line := func(style lipgloss.Style, text string) {
		b.WriteString(style.Render(common.Wrap(text, s.Width)) + "\n")
	}
	status := c.stepStatus(steps.StepAddons)
	switch {
	case (r.state == "done" || r.state != "failed" && r.state != runRunning && status == engine.StatusDone) && !addons.Enabled(c.spec)[addons.Cilium]:
		// The step waited only for provider IDs: without a CNI no node is Ready.
		b.WriteString(st.Title.Render("Cluster "+name+" is up but not ready to use") + "\n\n")
		line(st.Warn, "✗ missing: a CNI. addons.cilium is switched off, so every node stays NotReady until you install one.")
		if r.summary != "" {
			line(st.Subtle, "last reported: "+r.summary)
		}
	case r.state == "done" || r.state != "failed" && r.state != runRunning && status == engine.StatusDone:
		b.WriteString(st.Title.Render("Cluster "+name+" is up and ready to use") + "\n\n")
		switch {
		case r.summary != "":
			line(st.Good, "✓ "+r.summary)
		default:
			line(st.Good, "✓ the add-ons step found every node Ready and the add-ons ready in an earlier run; \"ohmytalos doctor\" checks it still is")
		}
		if len(r.addons) > 0 {
			line(st.Good, "✓ add-ons applied: "+strings.Join(r.addons, ", "))
		}
	case r.state == "failed" || status == engine.StatusFailed:
		b.WriteString(st.Title.Render("Cluster "+name+" is up but not ready to use") + "\n\n")
		// The step's error names what is missing; without it (a failure
		// this wizard did not see end) the last reports say it.
		why := r.err
		if why == "" {
			why = c.status[steps.StepAddons].Error
		}
		switch {
		case why != "":
			b.WriteString(errorText(s.Common, s.c.fullErrors, st.Bad, "✗ missing: "+why, s.Width) + "\n")
		case len(r.missing()) > 0:
			line(st.Bad, "✗ missing (last reported): "+r.summary)
			for _, row := range r.missing() {
				line(st.Warn, "  "+row.resource+": "+row.status)
			}
		default:
			line(st.Bad, "✗ the add-ons step failed without saying why; run \"ohmytalos doctor --check nodes-ready,addons\"")
		}
		line(st.Subtle, "Go back to the bootstrap step ("+s.Keys.Prev.Help().Key+") and press "+s.Keys.Retry.Help().Key+" to resume, or run \"ohmytalos apply --only addons\" to wait again.")
	default:
		b.WriteString(st.Title.Render("Cluster "+name+" is up but not ready to use") + "\n\n")
		line(st.Warn, "The add-ons step (Cilium, Hetzner cloud controller and CSI) has not run: nodes stay NotReady without a CNI. Run \"ohmytalos apply\" to install them.")
	}
	return b.String()
}
