package ui

import (
	"fmt"
	"github.com/ohmytalos/ohmytalos/steps"
	"strings"

	"github.com/charmbracelet/bubbles/key"
	"github.com/charmbracelet/bubbles/textinput"
	tea "github.com/charmbracelet/bubbletea"

	"github.com/ohmytalos/ohmytalos/internal/engine"
	"github.com/ohmytalos/ohmytalos/internal/spec"
	"github.com/ohmytalos/ohmytalos/ui/common"
	"github.com/ohmytalos/ohmytalos/ui/components"
)

// secretProviders are the providers a reference can name, with what the
// reference means for each; bwFirst puts the vault first (the sandbox
// offers its Vaultwarden lookup first).
func secretProviders(bwFirst bool) [][2]string {
	env := [2]string{"env", "environment variable name, e.g. HCLOUD_TOKEN"}
	bw := [2]string{"bw", "Vaultwarden/Bitwarden item ID or exact name (bw CLI or bw serve)"}
	bws := [2]string{"bws", "Bitwarden Secrets Manager secret ID"}
	if bwFirst {
		return [][2]string{bw, env, bws}
	}
	return [][2]string{env, bw, bws}
}

// secretsScreen picks where the Hetzner token comes from and runs the
// secrets step to look it up and check it.
type secretsScreen struct {
	// page is the screen's own copy of the size, styles and keys.
	page
	c         *shared
	providers [][2]string
	provider  int
	inputs    []textinput.Model // ref, field, server URL
	focus     int               // 0 provider, 1.. inputs
	screenRun
	log []engine.Event
}

func newSecrets(c *shared, com common.Common) *secretsScreen {
	vault := c.backend.SandboxVault
	if vault != nil && !c.opts.Resume && isDefaultTokenRef(c.spec.Secrets.HCloudToken) {
		offered := *vault // offered first; env stays a choice
		c.editSpec(func(sp *spec.Spec) { sp.Secrets.HCloudToken = offered })
	}
	ref := c.spec.Secrets.HCloudToken
	s := &secretsScreen{c: c, page: page{com}, providers: secretProviders(vault != nil)}
	for i, p := range s.providers {
		if p[0] == ref.Provider {
			s.provider = i
		}
	}
	w := 36
	s.inputs = []textinput.Model{
		components.NewInput(com.Styles, ref.Ref, "HCLOUD_TOKEN", w),
		components.NewInput(com.Styles, ref.Field, "optional: custom field name", w),
		components.NewInput(com.Styles, ref.ServerURL, "optional: bw serve / server URL", w),
	}
	if c.stepStatus(steps.StepSecrets) == engine.StatusDone {
		s.result = "ok"
	}
	return s
}

func (s *secretsScreen) enter() tea.Cmd  { return nil }
func (s *secretsScreen) capturing() bool { return s.focus > 0 }

func (s *secretsScreen) help() keyHelp {
	km := s.Keys
	enter := km.Enter
	enter.SetHelp("enter", "look up and check the token")
	if s.result == "ok" {
		enter.SetHelp("enter", "continue")
	}
	sw := km.Left
	sw.SetHelp("←/→", "provider")
	short := []key.Binding{km.Tab, sw, enter}
	if s.result == runFailed {
		enter.SetHelp("enter", "look up again")
		short = []key.Binding{enter, fullErrorKey(s.Keys, s.c.fullErrors), km.Tab, sw}
	}
	return keyHelp{short: short}
}

func (s *secretsScreen) update(msg tea.Msg) tea.Cmd {
	if k, ok := msg.(tea.KeyMsg); ok {
		return s.key(k)
	}
	if ev, ok := s.runEvent(msg); ok {
		s.log = append(s.log, ev)
	}
	s.runDone(msg)
	return nil
}

func (s *secretsScreen) key(msg tea.KeyMsg) tea.Cmd {
	km := s.Keys
	switch {
	case key.Matches(msg, km.Enter):
		if cmd, handled := s.enterKey(scrImages); handled {
			return cmd
		}
		return s.check()
	case key.Matches(msg, km.Tab):
		s.setFocus((s.focus + 1) % (len(s.inputs) + 1))
		return nil
	case key.Matches(msg, km.ShiftTab):
		s.setFocus((s.focus + len(s.inputs)) % (len(s.inputs) + 1))
		return nil
	case s.focus == 0 && key.Matches(msg, km.Left, km.Right):
		n := len(s.providers)
		if key.Matches(msg, km.Left) {
			s.provider = (s.provider + n - 1) % n
		} else {
			s.provider = (s.provider + 1) % n
		}
		s.apply()
		return nil
	}
	if s.focus == 0 {
		return nil
	}
	var cmd tea.Cmd
	s.inputs[s.focus-1], cmd = s.inputs[s.focus-1].Update(msg)
	s.apply()
	return cmd
}

func (s *secretsScreen) setFocus(f int) {
	s.focus = f
	for i := range s.inputs {
		if i == f-1 {
			s.inputs[i].Focus()
		} else {
			s.inputs[i].Blur()
		}
	}
}

// apply writes the form into the working spec; a changed reference needs a
// new check.
func (s *secretsScreen) apply() {
	before := s.c.spec.Secrets.HCloudToken
	ref := before
	ref.Provider = s.providers[s.provider][0]
	ref.Ref = strings.TrimSpace(s.inputs[0].Value())
	ref.Field = strings.TrimSpace(s.inputs[1].Value())
	ref.ServerURL = strings.TrimSpace(s.inputs[2].Value())
	s.c.editSpec(func(sp *spec.Spec) { sp.Secrets.HCloudToken = ref })
	if ref != before {
		s.result, s.err = "", ""
	}
}

// check runs the secrets step alone.
func (s *secretsScreen) check() tea.Cmd {
	s.apply()
	if s.c.spec.Secrets.HCloudToken.Ref == "" {
		s.result, s.err = "failed", "the reference is empty: type the "+s.providers[s.provider][1]
		return nil
	}
	cmd := s.startEngine(s.c, engine.Options{Only: steps.StepSecrets})
	if cmd != nil {
		s.log = nil
	}
	return cmd
}

func (s *secretsScreen) view() string {
	c, st := s.c, s.Styles
	var b strings.Builder
	b.WriteString(header(s.Common, "Hetzner Cloud API token", "The spec stores only a reference; the token is looked up when needed and never written.") + "\n")
	if c.backend.Sandbox {
		b.WriteString(st.Warn.Render(common.Wrap(sandboxNote(c.backend.SandboxVault), s.Width)) + "\n\n")
	}
	var provs []string
	for i, p := range s.providers {
		if i == s.provider {
			provs = append(provs, st.Selected.Render("["+p[0]+"]"))
		} else {
			provs = append(provs, st.Subtle.Render(" "+p[0]+" "))
		}
	}
	cursor := func(i int) string {
		if s.focus == i {
			return st.Accent.Render("› ")
		}
		return "  "
	}
	b.WriteString(cursor(0) + st.Label.Render("provider") + strings.Join(provs, " ") + "\n")
	labels := []string{"reference", "field", "server URL"}
	for i, in := range s.inputs {
		b.WriteString(cursor(i+1) + st.Label.Render(labels[i]) + in.View() + "\n")
	}
	b.WriteString("  " + st.Subtle.Render(st.Label.Render("")+s.providers[s.provider][1]) + "\n\n")
	ref := c.spec.Secrets.HCloudToken
	switch s.result {
	case "running":
		b.WriteString(st.Accent.Render("looking up the token…") + "\n")
	case "ok":
		b.WriteString(st.Good.Render("✓ token found and checked") + "  " + st.Subtle.Render(fmt.Sprintf("%s:%s = ", ref.Provider, ref.Ref)) + "••••••••••••" + "\n")
	case "failed":
		b.WriteString(s.failureView(s.Common, s.c.fullErrors, s.Width))
	}
	for _, ev := range s.log {
		if ev.Kind == engine.KindStarted {
			continue
		}
		line := ev.Message
		style := st.Subtle
		switch ev.Kind {
		case engine.KindWarning:
			style, line = st.Warn, "warning: "+line
		case engine.KindFailed:
			style = st.Bad
		case engine.KindDone:
			style = st.Good
		}
		b.WriteString(style.Render(common.Wrap("  "+line, s.Width)) + "\n")
	}
	return b.String()
}

// isDefaultTokenRef reports whether ref is the new spec's reference (the
// HCLOUD_TOKEN variable), which the operator has not chosen yet.
func isDefaultTokenRef(ref spec.SecretRef) bool {
	return ref == spec.SecretRef{} || ref == spec.SecretRef{Provider: "env", Ref: "HCLOUD_TOKEN"}
}

// sandboxNote says what the sandbox checks the token against, and where
// its vault is when it offers one.
func sandboxNote(vault *spec.SecretRef) string {
	if vault == nil {
		return "Sandbox: the token is checked against the fake Hetzner API."
	}
	return "Sandbox: a Vaultwarden vault (bw serve at " + vault.ServerURL + ") holds the sandbox token in item " + vault.Ref +
		"; enter looks it up there and checks it against the fake Hetzner API. The env provider (HCLOUD_TOKEN) works too."
}
