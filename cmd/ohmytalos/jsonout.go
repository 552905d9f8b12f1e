package main

import (
	"encoding/json"
	"io"

	"github.com/ohmytalos/ohmytalos/internal/engine"
	"github.com/ohmytalos/ohmytalos/internal/netplan"
	"github.com/ohmytalos/ohmytalos/internal/pricing"
	"github.com/ohmytalos/ohmytalos/internal/spec"
	"github.com/ohmytalos/ohmytalos/steps"
)

// jsonSchemaVersion is the version of the cost, plan and doctor JSON
// documents (docs/json.md); it changes only when a field changes meaning
// or goes away.
const jsonSchemaVersion = 1

// costJSON is "cost --json".
type costJSON struct {
	SchemaVersion int    `json:"schema_version"`
	Cluster       string `json:"cluster"`
	Sandbox       bool   `json:"sandbox"`
	pricing.EstimateJSON
	// PriceNote says why live prices were not used, when they were not.
	PriceNote string `json:"price_note,omitempty"`
}

// planJSON is "plan --json".
type planJSON struct {
	SchemaVersion int                   `json:"schema_version"`
	Cluster       string                `json:"cluster"`
	Config        string                `json:"config"`
	Sandbox       bool                  `json:"sandbox"`
	Steps         []planStepJSON        `json:"steps"`
	Findings      []findingJSON         `json:"findings"`
	Problems      spec.Problems         `json:"problems"`
	Preflight     steps.Findings        `json:"preflight"`
	PreflightNote string                `json:"preflight_note,omitempty"`
	Cost          *pricing.EstimateJSON `json:"cost"`
	CostNote      string                `json:"cost_note,omitempty"`
	Error         string                `json:"error,omitempty"`
}

// planStepJSON is one step of a plan.
type planStepJSON struct {
	Name   string         `json:"name"`
	Title  string         `json:"title"`
	Status string         `json:"status"`
	Items  []planItemJSON `json:"items"`
	Notes  []string       `json:"notes"`
}

// planItemJSON is one resource a step would create, reuse, update or delete.
type planItemJSON struct {
	Action string `json:"action"`
	Kind   string `json:"kind"`
	Name   string `json:"name"`
	Detail string `json:"detail,omitempty"`
}

// findingJSON is one network finding.
type findingJSON struct {
	Severity string `json:"severity"`
	Field    string `json:"field"`
	Message  string `json:"message"`
	Fix      string `json:"fix,omitempty"`
}

// planSteps turns the engine's plans into their JSON form; titles and
// statuses come from the step at the same index.
func planSteps(plans []engine.Plan, steps []engine.Step, status []engine.StepStatus) []planStepJSON {
	out := make([]planStepJSON, 0, len(plans))
	for i, p := range plans {
		ps := planStepJSON{Name: string(p.Step), Items: make([]planItemJSON, 0, len(p.Items)), Notes: append([]string{}, p.Notes...)}
		if i < len(steps) {
			ps.Title = steps[i].Title()
		}
		if i < len(status) {
			ps.Status = string(status[i].Status)
		}
		for _, it := range p.Items {
			ps.Items = append(ps.Items, planItemJSON{Action: string(it.Action), Kind: it.Kind, Name: it.Name, Detail: it.Detail})
		}
		out = append(out, ps)
	}
	return out
}

func findingsJSON(fs []netplan.Finding) []findingJSON {
	out := make([]findingJSON, 0, len(fs))
	for _, f := range fs {
		out = append(out, findingJSON{Severity: string(f.Severity), Field: f.Field, Message: f.Message, Fix: f.Fix})
	}
	return out
}

// writeJSON writes v as one indented JSON document.
func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}
