package doctor

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
)

// JSONSchemaVersion is the version of the doctor's JSON document
// (docs/json.md); it changes only when a field changes meaning or goes away.
const JSONSchemaVersion = 1

// JSONReport is the doctor's --json document.
type JSONReport struct {
	SchemaVersion int          `json:"schema_version"`
	Sandbox       bool         `json:"sandbox"`
	Notes         []string     `json:"notes"`
	Summary       JSONSummary  `json:"summary"`
	ExitCode      int          `json:"exit_code"`
	Checks        []JSONResult `json:"checks"`
}

// JSONSummary counts the checks per status.
type JSONSummary struct {
	Total int `json:"total"`
	Pass  int `json:"pass"`
	Warn  int `json:"warn"`
	Fail  int `json:"fail"`
	Error int `json:"error"`
	Skip  int `json:"skip"`
}

// JSONResult is one check in the JSON document: its Result (evidence
// always a list; a skipped check gives its reason in explanation) and its
// duration in milliseconds.
type JSONResult struct {
	Result
	DurationMS int64 `json:"duration_ms"`
}

// JSONOptions is what the document says besides the results.
type JSONOptions struct {
	// Sandbox is set when the checks ran against the sandbox.
	Sandbox bool
	// Notes are the notes on missing sources (printed to stderr in text).
	Notes []string
}

// Report builds the JSON document of rs.
func Report(rs []Result, o JSONOptions) JSONReport {
	rep := JSONReport{
		SchemaVersion: JSONSchemaVersion, Sandbox: o.Sandbox, Notes: append([]string{}, o.Notes...),
		ExitCode: ExitCode(rs), Checks: make([]JSONResult, 0, len(rs)),
	}
	for _, r := range rs {
		jr := JSONResult{Result: r, DurationMS: r.Duration.Milliseconds()}
		jr.Evidence = append([]string{}, r.Evidence...)
		rep.Checks = append(rep.Checks, jr)
		rep.Summary.Total++
		switch r.Status {
		case StatusPass:
			rep.Summary.Pass++
		case StatusWarn:
			rep.Summary.Warn++
		case StatusFail:
			rep.Summary.Fail++
		case StatusError:
			rep.Summary.Error++
		case StatusSkip:
			rep.Summary.Skip++
		}
	}
	return rep
}

// WriteJSON writes the results as one JSON document (docs/json.md).
func WriteJSON(w io.Writer, rs []Result, o JSONOptions) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	if err := enc.Encode(Report(rs, o)); err != nil {
		return fmt.Errorf("write the doctor report as JSON: %w", err)
	}
	return nil
}

// WriteText writes the results for a terminal without colours: one headline
// per check, then its evidence, explanation and fix indented, then a summary.
func WriteText(w io.Writer, rs []Result) error {
	var b strings.Builder
	counts := map[Status]int{}
	for _, r := range rs {
		counts[r.Status]++
		fmt.Fprintf(&b, "%-5s %-20s %s\n", strings.ToUpper(string(r.Status)), r.ID, r.Title)
		for _, e := range r.Evidence {
			for _, line := range strings.Split(strings.TrimRight(e, "\n"), "\n") {
				fmt.Fprintf(&b, "        - %s\n", line)
			}
		}
		if r.Explanation != "" {
			writeWrapped(&b, "why: ", r.Explanation)
		}
		if r.Fix != "" {
			writeWrapped(&b, "fix: ", r.Fix)
		}
	}
	fmt.Fprintf(&b, "\n%d checks: %d pass, %d warn, %d fail, %d error, %d skip\n",
		len(rs), counts[StatusPass], counts[StatusWarn], counts[StatusFail], counts[StatusError], counts[StatusSkip])
	if _, err := io.WriteString(w, b.String()); err != nil {
		return fmt.Errorf("write doctor report: %w", err)
	}
	return nil
}

func writeWrapped(b *strings.Builder, label, text string) {
	const indent = "        "
	for i, line := range strings.Split(text, "\n") {
		if i == 0 {
			fmt.Fprintf(b, "%s%s%s\n", indent, label, line)
		} else {
			fmt.Fprintf(b, "%s     %s\n", indent, line)
		}
	}
}

// result helpers keep the checks short.

func pass(evidence ...string) Result { return Result{Status: StatusPass, Evidence: evidence} }

func skip(reason string) Result {
	return Result{Status: StatusSkip, Explanation: reason}
}

// fetch reads one fact from src with get. When it cannot, ok is false
// and r is the check's result: a skip with why when src is nil or lacks
// the interface S, sourceError naming what when get fails.
func fetch[S, T any](ctx context.Context, src any, why string, get func(S, context.Context) (T, error), what string) (v T, r Result, ok bool) {
	s, ok := src.(S)
	if !ok {
		return v, skip(why), false
	}
	v, err := get(s, ctx)
	if err != nil {
		return v, sourceError(what, err), false
	}
	return v, Result{}, true
}

// failed is a failing result: the problems found, then the evidence.
func failed(problems, evidence []string, explanation, fix string) Result {
	return Result{Status: StatusFail, Evidence: append(problems, evidence...), Explanation: explanation, Fix: fix}
}

func sourceError(what string, err error) Result {
	return Result{
		Status:      StatusError,
		Explanation: fmt.Sprintf("could not read %s: %v", what, err),
		Fix:         "check that the source is reachable and the credentials are valid, then run the doctor again",
	}
}
