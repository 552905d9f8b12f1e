package main

import (
	"context"
	"fmt"
	"io"

	"github.com/ohmytalos/ohmytalos/steps"
)

// preflight runs the pre-flight checks against the live API; note says
// why they could not run (no token, no API), redacted.
func preflight(ctx context.Context, rt *runtime) (fs steps.Findings, note string) {
	fs, err := steps.Preflight(ctx, rt.deps, rt.env)
	if err != nil {
		return fs, "pre-flight not checked against Hetzner: " + rt.redact(err.Error())
	}
	return fs, ""
}

// writePreflight prints the findings as plan lines.
func writePreflight(w io.Writer, fs steps.Findings, note string) {
	if len(fs) == 0 && note == "" {
		return
	}
	fmt.Fprintln(w, "\npre-flight:")
	for _, f := range fs {
		fmt.Fprintf(w, "   %s: %s: %s", f.Severity, f.Field, f.Reason)
		if f.Fix != "" {
			fmt.Fprintf(w, " (fix: %s)", f.Fix)
		}
		fmt.Fprintln(w)
	}
	if note != "" {
		fmt.Fprintln(w, "   note: "+note)
	}
}
