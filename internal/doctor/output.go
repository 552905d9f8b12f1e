package doctor

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
)

// jsonResult fixes the JSON shape of one line: evidence is always a list.
type jsonResult struct {
	ID          string   `json:"id"`
	Title       string   `json:"title"`
	Status      Status   `json:"status"`
	Evidence    []string `json:"evidence"`
	Explanation string   `json:"explanation"`
	Fix         string   `json:"fix"`
}

// WriteJSON writes one JSON object per result and line, with the fields id,
// title, status, evidence, explanation and fix.
func WriteJSON(w io.Writer, rs []Result) error {
	enc := json.NewEncoder(w)
	for _, r := range rs {
		ev := r.Evidence
		if ev == nil {
			ev = []string{}
		}
		if err := enc.Encode(jsonResult{ID: r.ID, Title: r.Title, Status: r.Status, Evidence: ev, Explanation: r.Explanation, Fix: r.Fix}); err != nil {
			return fmt.Errorf("write doctor result %s as JSON: %w", r.ID, err)
		}
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

func sourceError(what string, err error) Result {
	return Result{
		Status:      StatusError,
		Explanation: fmt.Sprintf("could not read %s: %v", what, err),
		Fix:         "check that the source is reachable and the credentials are valid, then run the doctor again",
	}
}
