package main

import (
	"bufio"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/ohmytalos/ohmytalos/internal/reporter"
	"github.com/ohmytalos/ohmytalos/internal/spec"
	"github.com/ohmytalos/ohmytalos/steps/destroy"
)

func newDestroyCmd(g *globals) *cobra.Command {
	var yes, images, unowned bool
	c := &cobra.Command{
		Use:   "destroy",
		Short: "Delete everything the cluster owns on Hetzner (asks for the cluster name)",
		Long: `destroy lists what it will delete: the resources labelled
ohmytalos.io/cluster=NAME that are this cluster's (their IDs are in its state,
or they carry its ohmytalos.io/cluster-id), plus load balancers the cloud
controller created in its network and the CSI driver's volumes of its claims.
A resource with the name but another or no cluster ID belongs to another
checkout or cluster of the same name: it is listed first and kept, unless
--include-unowned. destroy asks you to type the cluster name (or --yes), then
deletes in dependency order. Snapshots are shared between clusters: --images
deletes only those this cluster built, never ones it reused. Safe to re-run:
what is already gone counts as deleted.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return g.withRuntime(cmd.Context(), "ohmytalos destroy", func(s *spec.Spec, rt *runtime) error {
				return runDestroy(cmd, s, rt, yes, destroy.Options{Images: images, IncludeUnowned: unowned})
			})
		},
	}
	c.Flags().BoolVar(&yes, "yes", false, "do not ask for confirmation")
	c.Flags().BoolVar(&images, "images", false, "also delete the snapshots this cluster built (never those it reused; other clusters may share them)")
	c.Flags().BoolVar(&unowned, "include-unowned", false, "also delete resources labelled with the cluster's name that are not in its state and lack its cluster ID (another checkout's or cluster's)")
	return c
}

// runDestroy lists what will be deleted, asks, and deletes.
func runDestroy(cmd *cobra.Command, s *spec.Spec, rt *runtime, yes bool, opts destroy.Options) error {
	p, err := destroy.NewPlan(cmd.Context(), rt.deps, rt.env, opts)
	if err != nil {
		return err
	}
	out := cmd.OutOrStdout()
	printUnowned(out, s.Name, p, opts.IncludeUnowned)
	for _, it := range p.Kept {
		fmt.Fprintf(out, "keeping %s %s (id %d): %s\n", it.Kind, it.Name, it.ID, it.Why)
	}
	if len(p.Items) == 0 {
		fmt.Fprintf(out, "nothing of cluster %s exists\n", s.Name)
		return nil
	}
	fmt.Fprintf(out, "destroy will delete %d resources of cluster %s:\n", len(p.Items), s.Name)
	for _, it := range p.Items {
		fmt.Fprintf(out, "  %-15s %-30s id %-10d %s\n", it.Kind, it.Name, it.ID, it.Why)
	}
	if !yes {
		fmt.Fprintf(out, "type the cluster name (%s) to confirm: ", s.Name)
		line, _ := bufio.NewReader(cmd.InOrStdin()).ReadString('\n')
		if strings.TrimSpace(line) != s.Name {
			return fmt.Errorf("not confirmed: nothing was deleted")
		}
	}
	return destroy.Run(cmd.Context(), rt.deps, rt.env, p, reporter.Plain(out))
}

// printUnowned lists, before anything else, the resources with the
// cluster's name that are not its own, and whether they are kept.
func printUnowned(out io.Writer, name string, p *destroy.Plan, include bool) {
	if len(p.Unowned) == 0 {
		return
	}
	verdict := "kept: they are not this cluster's (rerun with --include-unowned to delete them too)"
	if include {
		verdict = "deleted too (--include-unowned)"
	}
	fmt.Fprintf(out, "%d resources labelled ohmytalos.io/cluster=%s are not in this cluster's state and lack its cluster ID; %s:\n", len(p.Unowned), name, verdict)
	for _, it := range p.Unowned {
		fmt.Fprintf(out, "  %-15s %-30s id %-10d %s\n", it.Kind, it.Name, it.ID, it.Why)
	}
}
