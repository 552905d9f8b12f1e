package ui

import (
	"fmt"
	"strings"

	"github.com/ohmytalos/ohmytalos/steps"
	"github.com/ohmytalos/ohmytalos/ui/common"
)

// preflightPanel is the review screen's pre-flight: the findings of the
// checks against the live API for the spec of hash, shown above the
// confirmation. Its errors keep the spec from being written, as they would
// stop apply.
type preflightPanel struct {
	hash     string
	running  bool
	findings steps.Findings
	err      string
}

// start marks the check for hash as running.
func (p *preflightPanel) start(hash string) {
	*p = preflightPanel{hash: hash, running: true}
}

// receive takes the findings of a finished check; those of an older spec
// are dropped.
func (p *preflightPanel) receive(msg PreflightMsg) {
	if msg.Hash != p.hash {
		return
	}
	p.running, p.findings, p.err = false, msg.Findings, ""
	if msg.Err != nil {
		p.err = msg.Err.Error()
	}
}

// errors is how many findings stop apply.
func (p *preflightPanel) errors() int { return len(p.findings.Errors()) }

// view renders the panel; "" when there is nothing to show.
func (p *preflightPanel) view(c *shared, com common.Common) string {
	st := com.Styles
	var b strings.Builder
	switch {
	case p.running:
		b.WriteString(st.Subtle.Render("pre-flight: checking the server types, limits, snapshots, firewall and API budget with Hetzner…") + "\n")
	case p.err != "":
		b.WriteString(st.Warn.Render(common.Wrap("pre-flight not checked against Hetzner: "+redact(c, p.err), com.Width)) + "\n")
	case p.hash != "" && len(p.findings) == 0:
		b.WriteString(st.Good.Render("✓ pre-flight: nothing stands in the way") + "\n")
	}
	for _, f := range p.findings {
		line := fmt.Sprintf("%s: %s", f.Field, f.Reason)
		if f.Fix != "" {
			line += " (fix: " + f.Fix + ")"
		}
		switch f.Severity {
		case steps.SeverityError:
			b.WriteString(st.Bad.Render(common.Wrap("✗ pre-flight "+line, com.Width)) + "\n")
		case steps.SeverityWarning:
			b.WriteString(st.Warn.Render(common.Wrap("! pre-flight "+line, com.Width)) + "\n")
		default:
			b.WriteString(st.Subtle.Render(common.Wrap("· "+line, com.Width)) + "\n")
		}
	}
	return b.String()
}

// redact scrubs secret values with the backend's Redact, when set.
func redact(c *shared, s string) string {
	if c.backend.Redact != nil {
		return c.backend.Redact(s)
	}
	return s
}
