package main

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/ohmytalos/ohmytalos/internal/cloud"
	"github.com/ohmytalos/ohmytalos/internal/engine"
	"github.com/ohmytalos/ohmytalos/internal/spec"
	"github.com/ohmytalos/ohmytalos/steps"
)

func newPlanCmd(g *globals) *cobra.Command {
	var asJSON, offline bool
	var operator string
	c := &cobra.Command{
		Use:   "plan",
		Short: "Show what apply would create, reuse or change, step by step, and what it costs",
		Long: `plan reads the spec and the cluster's state, compares the resources that
exist with the spec, and prints, for every step, what apply would create,
update in place (with the old and new values), reuse, or could not change in
place ("replace": apply reports it and leaves the resource). It changes nothing.

A Hetzner API endpoint that ohmytalos refuses (HCLOUD_ENDPOINT over plain
http to another machine) fails plan, as it fails apply. With --offline, plan
asks no Hetzner API: it plans from the spec and the state alone, with the
offline price list, and says so in each step's notes.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := checkOperatorAddress(operator); err != nil {
				return err
			}
			return g.withRuntime(cmd.Context(), "", func(s *spec.Spec, rt *runtime) error {
				if offline {
					rt.deps.Offline = true
				} else if err := planEndpoint(rt.deps.HCloudEndpoint); err != nil {
					return err
				}
				rt.deps.OperatorAddresses = operator
				return printPlan(cmd, g, s, rt, asJSON)
			})
		},
	}
	c.Flags().BoolVar(&asJSON, "json", false, "print the plans as JSON")
	c.Flags().BoolVar(&offline, "offline", false, "ask no Hetzner API: plan from the spec and the state alone (a refused HCLOUD_ENDPOINT is then no error)")
	operatorAddressFlag(c, &operator)
	return c
}

// planEndpoint refuses a Hetzner API endpoint that apply would refuse
// (cloud.CheckEndpoint): a plan that quietly fell back to the state would
// exit 0 with a plan apply cannot carry out.
func planEndpoint(explicit string) error {
	if err := cloud.CheckEndpoint(explicit); err != nil {
		return fmt.Errorf("%w; plan compares the spec with Hetzner through this endpoint, as apply does: fix it, or pass --offline to plan from the spec and the state alone", err)
	}
	return nil
}

// printPlan prints every step's plan, the network findings and the cost.
func printPlan(cmd *cobra.Command, g *globals, s *spec.Spec, rt *runtime, asJSON bool) error {
	plans, err := rt.engine.Plan(cmd.Context(), rt.env)
	if asJSON {
		return printPlanJSON(cmd, g, s, rt, plans, err)
	}
	out := cmd.OutOrStdout()
	fmt.Fprintf(out, "cluster %s (%s)\n", s.Name, g.config)
	if rt.deps.Sandbox {
		fmt.Fprintln(out, "SANDBOX: nothing here exists on Hetzner")
	}
	status := rt.engine.Status(rt.env.State.Get(), s.Hash())
	for i, p := range plans {
		fmt.Fprintf(out, "\n%d. %s [%s]\n", i+1, rt.engine.Steps()[i].Title(), status[i].Status)
		for _, it := range p.Items {
			line := fmt.Sprintf("   %-7s %-14s %s", it.Action, it.Kind, it.Name)
			if it.Detail != "" {
				line += "  " + it.Detail
			}
			fmt.Fprintln(out, strings.TrimRight(line, " "))
			for _, ch := range it.Changes {
				fmt.Fprintln(out, "           "+ch.String())
			}
		}
		for _, n := range p.Notes {
			fmt.Fprintln(out, "   note: "+n)
		}
	}
	if fs := s.Findings(); len(fs) > 0 {
		fmt.Fprintln(out, "\nnetwork findings:")
		writeFindings(out, fs)
	}
	pre, preNote := preflight(cmd.Context(), rt)
	writePreflight(out, pre, preNote)
	if cat, why := catalog(cmd.Context(), rt.deps, s); cat != nil {
		if ps := steps.CheckServerTypes(s, cat); len(ps) > 0 && preNote != "" {
			// Only when pre-flight could not check them live.
			fmt.Fprintln(out, "\n"+ps.Error())
		}
		if est, cerr := cat.Estimate(s.Usage()); cerr == nil {
			fmt.Fprintf(out, "\ncost: %s EUR/month net, %s gross (%s EUR/hour net); details: ohmytalos cost\n   %s\n",
				est.MonthlyNet.Format(2), est.MonthlyGross.Format(2), est.HourlyNet.Format(4), est.Label)
			if est.Warning != "" {
				fmt.Fprintln(out, "   warning: "+est.Warning)
			}
			if why != "" {
				fmt.Fprintln(out, "   note: "+why)
			}
		}
	}
	return err
}

// printPlanJSON prints the plan document of docs/json.md; err is the
// planning error, returned after the document is written.
func printPlanJSON(cmd *cobra.Command, g *globals, s *spec.Spec, rt *runtime, plans []engine.Plan, err error) error {
	doc := planJSON{
		SchemaVersion: jsonSchemaVersion, Cluster: s.Name, Config: g.config, Sandbox: rt.deps.Sandbox,
		Steps:    planSteps(plans, rt.engine.Steps(), rt.engine.Status(rt.env.State.Get(), s.Hash())),
		Findings: findingsJSON(s.Findings()), Problems: spec.Problems{},
	}
	if err != nil {
		doc.Error = rt.redact(err.Error())
	}
	doc.Preflight, doc.PreflightNote = preflight(cmd.Context(), rt)
	if doc.Preflight == nil {
		doc.Preflight = steps.Findings{}
	}
	cat, why := catalog(cmd.Context(), rt.deps, s)
	doc.CostNote = why
	if cat != nil {
		if ps := steps.CheckServerTypes(s, cat); len(ps) > 0 {
			doc.Problems = ps
		}
		if est, cerr := cat.Estimate(s.Usage()); cerr == nil {
			j := est.JSON()
			doc.Cost = &j
		} else {
			doc.CostNote = cerr.Error()
		}
	}
	if e := writeJSON(cmd.OutOrStdout(), doc); e != nil {
		return e
	}
	return err
}
