// Command ohmytalos builds Talos Linux Kubernetes clusters on Hetzner Cloud:
// an interactive wizard (init), headless plan/apply, cost, doctor and
// destroy. Each command parses its flags and calls a package.
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/ohmytalos/ohmytalos/ui/theme/quietstart"
)

// exitError carries a specific exit code (doctor: 1 when a check fails).
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string {
	if e.err == nil {
		return fmt.Sprintf("exit status %d", e.code)
	}
	return e.err.Error()
}

func main() {
	// TERM was hidden from the libraries' import-time terminal query.
	quietstart.Restore()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	root, g := newRoot()
	err := root.ExecuteContext(ctx)
	if err == nil {
		return
	}
	// Redacted once more here: cobra's own errors (flags, arguments) do not
	// pass through a command's RunE.
	msg := g.secrets.Redact(err.Error())
	var ee *exitError
	if errors.As(err, &ee) {
		if ee.err != nil {
			fmt.Fprintln(os.Stderr, "error:", msg)
		}
		os.Exit(ee.code)
	}
	fmt.Fprintln(os.Stderr, "error:", msg)
	os.Exit(1)
}
