package steps

import (
	"context"
	"fmt"
	"strings"

	"github.com/ohmytalos/ohmytalos/internal/engine"
	"github.com/ohmytalos/ohmytalos/internal/pricing"
)

// Severity ranks a pre-flight finding: errors stop apply before anything
// is created, warnings and notes are shown in plan and the wizard's review.
type Severity string

// The severities of a finding.
const (
	SeverityError   Severity = "error"
	SeverityWarning Severity = "warning"
	SeverityNote    Severity = "note"
)

// The pre-flight checks, as Finding.Check names them.
const (
	CheckTypes     = "server-types"
	CheckLimits    = "limits"
	CheckBudget    = "api-budget"
	CheckSnapshots = "snapshots"
	CheckReach     = "reachability"
)

// Finding is one pre-flight result: which check, how bad, the spec field it
// concerns, why, and what to do.
type Finding struct {
	Check    string   `json:"check"`
	Severity Severity `json:"severity"`
	Field    string   `json:"field"`
	Reason   string   `json:"reason"`
	Fix      string   `json:"fix"`
}

// String reads "error: limits.servers: ... (fix: ...)".
func (f Finding) String() string {
	s := fmt.Sprintf("%s: %s: %s", f.Severity, f.Field, f.Reason)
	if f.Fix != "" {
		s += " (fix: " + f.Fix + ")"
	}
	return s
}

// Findings are the results of one pre-flight; as an error (the errors
// among them) it is what stops apply.
type Findings []Finding

// Errors returns the findings of severity error.
func (fs Findings) Errors() Findings {
	var out Findings
	for _, f := range fs {
		if f.Severity == SeverityError {
			out = append(out, f)
		}
	}
	return out
}

// Has reports whether a finding of check names field.
func (fs Findings) Has(check, field string) bool {
	for _, f := range fs {
		if f.Check == check && f.Field == field {
			return true
		}
	}
	return false
}

// Error implements error.
func (fs Findings) Error() string {
	lines := []string{fmt.Sprintf("pre-flight found %d problem(s); nothing was created:", len(fs))}
	for _, f := range fs {
		lines = append(lines, "  - "+f.String())
	}
	return strings.Join(lines, "\n")
}

// Preflight checks, before anything is created, what the live Hetzner API
// and this machine tell about the plan: the server types (they exist, are
// orderable in the pool's location and architecture, not deprecated), the
// project's limits against what the plan adds to what exists, the snapshots
// each pool needs, whether this machine reaches the Talos and Kubernetes
// APIs through the firewall the plan sets, and the API budget the plan
// needs against what is left. err is set when the API cannot be asked at
// all (no token): callers fall back to the offline checks.
func Preflight(ctx context.Context, d *Deps, env *engine.Env) (Findings, error) {
	sp := env.Spec
	c, err := d.PlanHCloud(ctx, sp)
	if err != nil {
		return nil, err
	}
	var fs Findings
	cat, err := pricing.FromAPI(ctx, c)
	if err != nil {
		return nil, err
	}
	for _, p := range CheckServerTypes(sp, cat) {
		fs = append(fs, Finding{Check: CheckTypes, Severity: SeverityError, Field: p.Field, Reason: p.Reason, Fix: p.Fix})
	}
	cen, err := takeCensus(ctx, c, sp)
	if err != nil {
		return fs, err
	}
	fs = append(fs, cen.limitFindings(sp)...)
	snaps, builds, err := d.snapshotFindings(ctx, c, sp, cat)
	if err != nil {
		return fs, err
	}
	fs = append(fs, snaps...)
	fs = append(fs, d.reachFindings(ctx, env)...)
	fs = append(fs, d.budgetFindings(cen, builds)...)
	return fs, nil
}
