package ui

import (
	"context"
	"strings"
	"time"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/ohmytalos/ohmytalos/internal/spec"
	"github.com/ohmytalos/ohmytalos/ui/common"
)

// OperatorAddressMsg carries the operator's detected public address as
// firewall source ranges (Backend.OperatorAddress), or why it failed.
type OperatorAddressMsg struct {
	Sources []string
	From    string
	Err     error
}

// operatorAddressCmd detects the operator's address; nil when the backend
// has no detector.
func operatorAddressCmd(ctx context.Context, b Backend, s *spec.Spec) tea.Cmd {
	if b.OperatorAddress == nil {
		return nil
	}
	snapshot := *s
	return func() tea.Msg {
		ctx, cancel := context.WithTimeout(ctx, 20*time.Second)
		defer cancel()
		src, from, err := b.OperatorAddress(ctx, &snapshot)
		return OperatorAddressMsg{Sources: src, From: from, Err: err}
	}
}

// firewallField binds firewall.allow to the network screen: the ranges
// that may reach the Talos and Kubernetes APIs, comma-separated. Empty
// means "detect my address at plan time".
func firewallField() netField {
	return netField{"firewall.allow", "API access", "your address",
		func(s *spec.Spec) string { return strings.Join(s.Firewall.Allow, ", ") },
		func(s *spec.Spec, v string) { s.Firewall.Allow = splitList(v) }}
}

// splitList splits "a, b c" into its non-empty items; nil when empty.
func splitList(v string) []string {
	f := strings.FieldsFunc(v, func(r rune) bool { return r == ',' || r == ' ' })
	if len(f) == 0 {
		return nil
	}
	return f
}

// accessState is the network screen's view of the detected address.
type accessState struct {
	detecting bool
	asked     bool
	detected  OperatorAddressMsg
	got       bool
}

// startDetect returns the detection command the first time the screen
// opens with an empty firewall.allow.
func (s *networkScreen) startDetect() tea.Cmd {
	if s.access.asked || len(s.c.spec.Firewall.Allow) > 0 {
		return nil
	}
	cmd := operatorAddressCmd(s.c.ctx, s.c.backend, s.c.spec)
	if cmd != nil {
		s.access.asked, s.access.detecting = true, true
	}
	return cmd
}

// detected fills firewall.allow with the detected ranges unless the
// operator already typed some.
func (s *networkScreen) detected(msg OperatorAddressMsg) {
	s.access.detecting, s.access.got, s.access.detected = false, true, msg
	if msg.Err != nil || len(s.c.spec.Firewall.Allow) > 0 {
		return
	}
	sources := msg.Sources
	s.c.editSpec(func(sp *spec.Spec) { sp.Firewall.Allow = sources })
	for i, f := range s.fields {
		if f.field == "firewall.allow" {
			s.inputs[i].SetValue(f.get(s.c.spec))
		}
	}
}

// accessNote is the line under the fields: what was detected, from where,
// and what an empty or open value means.
func (s *networkScreen) accessNote() string {
	st, a := s.Styles, s.access
	switch {
	case s.c.spec.OpenToInternet():
		return st.Warn.Render("! API access 0.0.0.0/0 opens the Talos and Kubernetes APIs to the whole internet")
	case a.detecting:
		return st.Subtle.Render("API access: detecting your public address…")
	case a.got && a.detected.Err != nil:
		return st.Bad.Render(common.Wrap("API access: could not detect your address ("+a.detected.Err.Error()+"): type the ranges that may reach the APIs", s.Width))
	case a.got:
		return st.Subtle.Render(common.Wrap("API access: detected "+strings.Join(a.detected.Sources, ", ")+" from "+a.detected.From+"; edit to admit other ranges", s.Width))
	case len(s.c.spec.Firewall.Allow) == 0:
		return st.Subtle.Render("API access: empty = only your address, detected at plan time")
	}
	return ""
}
