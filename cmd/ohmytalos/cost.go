package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"

	"github.com/spf13/cobra"

	"github.com/ohmytalos/ohmytalos/internal/netplan"
	"github.com/ohmytalos/ohmytalos/internal/pricing"
	"github.com/ohmytalos/ohmytalos/internal/spec"
	"github.com/ohmytalos/ohmytalos/steps"
)

func newCostCmd(g *globals) *cobra.Command {
	var asJSON bool
	var vat string
	c := &cobra.Command{
		Use:   "cost",
		Short: "Print the monthly and hourly cost of the spec, per pool and in total",
		Long: `cost prices every server, primary IP, load balancer, volume and snapshot the
spec asks for, net and gross. Prices come from the Hetzner API when a token
is available, otherwise from a dated offline price list (labelled as such).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runCost(cmd, g, asJSON, vat)
		},
	}
	c.Flags().BoolVar(&asJSON, "json", false, "print JSON for machines")
	c.Flags().StringVar(&vat, "vat", "", "VAT rate in percent to compute gross prices (default: the API's or the price list's)")
	return c
}

// catalog returns live prices when the token can be looked up (or the
// sandbox runs), else the offline snapshot; why says which and why.
func catalog(ctx context.Context, d *steps.Deps, s *spec.Spec) (cat *pricing.Catalog, why string) {
	c, err := d.PlanHCloud(ctx, s)
	if err == nil {
		cat, err = pricing.FromAPI(ctx, c)
		if err == nil {
			return cat, ""
		}
	}
	off, oerr := pricing.Offline()
	if oerr != nil {
		return nil, oerr.Error()
	}
	return off, fmt.Sprintf("live prices unavailable (%s)", d.Redact(err.Error()))
}

func runCost(cmd *cobra.Command, g *globals, asJSON bool, vat string) error {
	s, err := g.loadSpec()
	if err != nil {
		return err
	}
	d, _, closeDeps, err := g.deps(cmd.Context(), slog.New(slog.DiscardHandler))
	if err != nil {
		return err
	}
	defer closeDeps()
	cat, why := catalog(cmd.Context(), d, s)
	if cat == nil {
		return fmt.Errorf("no prices: %s", why)
	}
	u := s.Usage()
	u.VATRate = vat
	est, err := cat.Estimate(u)
	if err != nil {
		return err
	}
	out := cmd.OutOrStdout()
	if asJSON {
		doc := costJSON{SchemaVersion: jsonSchemaVersion, Cluster: s.Name, Sandbox: d.Sandbox, EstimateJSON: est.JSON()}
		if why != "" {
			doc.PriceNote = why + "; using the offline price list"
		}
		return writeJSON(out, doc)
	}
	if d.Sandbox {
		fmt.Fprintln(out, "SANDBOX: prices from the sandbox's price list; nothing is created")
	}
	if why != "" {
		fmt.Fprintln(cmd.ErrOrStderr(), "note: "+why+"; using the offline price list")
	}
	fmt.Fprintf(out, "cluster %s: %d servers\n\n", s.Name, len(s.Nodes()))
	return pricing.WriteTable(out, est)
}

// writeFindings prints network findings as plan lines.
func writeFindings(w io.Writer, fs []netplan.Finding) {
	for _, f := range fs {
		fmt.Fprintf(w, "   %s: %s: %s", f.Severity, f.Field, f.Message)
		if f.Fix != "" {
			fmt.Fprintf(w, " (fix: %s)", f.Fix)
		}
		fmt.Fprintln(w)
	}
}
