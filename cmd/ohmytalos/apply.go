package main

import (
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/mattn/go-isatty"
	"github.com/spf13/cobra"

	"github.com/ohmytalos/ohmytalos/internal/cloud"
	"github.com/ohmytalos/ohmytalos/internal/engine"
	"github.com/ohmytalos/ohmytalos/internal/reporter"
	"github.com/ohmytalos/ohmytalos/internal/spec"
	"github.com/ohmytalos/ohmytalos/steps"
)

func newApplyCmd(g *globals) *cobra.Command {
	var opts engine.Options
	var only, from, operator string
	var plain, asJSON, yes, allowLockout bool
	var nodeTimeout time.Duration
	c := &cobra.Command{
		Use:   "apply",
		Short: "Create or resume the cluster the spec describes",
		Long: `apply runs the steps in order (secrets, images, network, pools, configs,
servers, bootstrap, addons, scale-down, upgrade), checkpointing after every
resource. Interrupt it at any
time (Ctrl-C, or even kill -9) and run it again: it resumes where it stopped
and never creates a resource twice. A second apply of a finished cluster
changes nothing.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Only, opts.From = engine.StepName(only), engine.StepName(from)
			if err := checkOperatorAddress(operator); err != nil {
				return err
			}
			return g.withRuntime(cmd.Context(), "ohmytalos apply", func(s *spec.Spec, rt *runtime) error {
				// An expert apply of some steps acts on the resources
				// its state names: not on the cluster ID alone.
				if only != "" {
					if err := steps.RequireStateOrBundle(rt.env, "apply --only "+only); err != nil {
						return err
					}
				} else if from != "" {
					if err := steps.RequireStateOrBundle(rt.env, "apply --from "+from); err != nil {
						return err
					}
				}
				rt.deps.AllowLockout, rt.deps.OperatorAddresses = allowLockout, operator
				if nodeTimeout > 0 {
					rt.deps.NodeTimeout = nodeTimeout
				}
				return runApply(cmd, s, rt, opts, plain, asJSON, yes, g.noColor)
			})
		},
	}
	c.Flags().StringVar(&only, "only", "", "run only this step (expert)")
	c.Flags().StringVar(&from, "from", "", "start at this step even if it is done (expert)")
	c.Flags().BoolVar(&plain, "plain", false, "print events as plain lines even on a terminal")
	c.Flags().BoolVar(&asJSON, "json", false, "print one JSON event per line")
	c.Flags().BoolVar(&yes, "yes", false, "apply even though the spec changed since the last apply")
	c.Flags().BoolVar(&allowLockout, "allow-lockout", false, "set a firewall.allow that does not (or, with the address unknown, might not) admit this machine's address (another machine or a VPN reaches the nodes)")
	operatorAddressFlag(c, &operator)
	c.Flags().DurationVar(&nodeTimeout, "node-timeout", 0, "how long to wait for a node's Talos or Kubernetes API before failing with the reason (default 15m)")
	return c
}

// runApply checks the spec change and the server types, then runs the engine.
func runApply(cmd *cobra.Command, s *spec.Spec, rt *runtime, opts engine.Options, plain, asJSON, yes, noColor bool) error {
	out := cmd.OutOrStdout()
	if diff := engine.SpecChange(rt.env); len(diff) > 0 && !yes {
		fmt.Fprintln(out, "the spec changed since the last apply:")
		for _, l := range diff {
			fmt.Fprintln(out, "  "+l)
		}
		return fmt.Errorf("not applied: review the change (and \"ohmytalos plan\"), then run \"ohmytalos apply --yes\" to apply it")
	}
	// Pre-flight, before anything is created: its errors stop apply.
	// Without the API, server types are checked against the offline list.
	pre, preErr := steps.Preflight(cmd.Context(), rt.deps, rt.env)
	if errs := pre.Errors(); len(errs) > 0 {
		return errs
	}
	if rl := (*cloud.RateLimitedError)(nil); errors.As(preErr, &rl) {
		return fmt.Errorf("pre-flight: %w", preErr)
	}
	// Charts through a mirror outside the sandbox: each must be the
	// pinned archive, checked before the first resource is created.
	if fs := steps.MirroredChartFindings(cmd.Context(), rt.deps, rt.env); len(fs) > 0 {
		return fs
	}
	preNote := ""
	if preErr != nil {
		preNote = preErr.Error()
	}
	if preNote != "" {
		if cat, _ := catalog(cmd.Context(), rt.deps, s); cat != nil {
			if ps := steps.CheckServerTypes(s, cat); len(ps) > 0 {
				return ps
			}
		}
	}
	if !asJSON {
		for _, f := range pre {
			if f.Severity == steps.SeverityWarning {
				fmt.Fprintln(out, "pre-flight "+f.String())
			}
		}
	}
	sink := reporter.Plain(out)
	if asJSON {
		sink = reporter.JSON(out)
	} else if !plain && isTerminal(out) {
		sink = reporter.Terminal(out, noColor)
	}
	if rt.deps.Sandbox && !asJSON {
		fmt.Fprintln(out, "SANDBOX: running against built-in fakes; nothing is created on Hetzner")
	}
	opts.Redact = rt.redact
	return rt.engine.Run(cmd.Context(), rt.env, opts, sink)
}

func isTerminal(w any) bool {
	f, ok := w.(*os.File)
	return ok && isatty.IsTerminal(f.Fd())
}
