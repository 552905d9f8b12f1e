package main

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/spf13/cobra"

	"github.com/ohmytalos/ohmytalos/internal/engine"
	"github.com/ohmytalos/ohmytalos/internal/privatefile"
	"github.com/ohmytalos/ohmytalos/internal/spec"
	"github.com/ohmytalos/ohmytalos/internal/talos"
	"github.com/ohmytalos/ohmytalos/steps"
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
				return runDestroy(cmd, s, rt, yes, steps.DestroyOptions{Images: images, IncludeUnowned: unowned})
			})
		},
	}
	c.Flags().BoolVar(&yes, "yes", false, "do not ask for confirmation")
	c.Flags().BoolVar(&images, "images", false, "also delete the snapshots this cluster built (never those it reused; other clusters may share them)")
	c.Flags().BoolVar(&unowned, "include-unowned", false, "also delete resources labelled with the cluster's name that are not in its state and lack its cluster ID (another checkout's or cluster's)")
	return c
}

// runDestroy lists what will be deleted, asks, and deletes.
func runDestroy(cmd *cobra.Command, s *spec.Spec, rt *runtime, yes bool, opts steps.DestroyOptions) error {
	p, err := steps.PlanDestroy(cmd.Context(), rt.deps, rt.env, opts)
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
	return steps.Destroy(cmd.Context(), rt.deps, rt.env, p, engine.PlainRenderer(out))
}

// printUnowned lists, before anything else, the resources with the
// cluster's name that are not its own, and whether they are kept.
func printUnowned(out io.Writer, name string, p *steps.DestroyPlan, include bool) {
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

func newTalosConfigCmd(g *globals) *cobra.Command {
	var out string
	var redact bool
	c := &cobra.Command{
		Use:   "talos-config",
		Short: "Write the rendered, validated Talos machine configs to a folder (mode 0600)",
		Long: `talos-config renders every node group's machine config exactly as apply sends
it as user_data (validated, without comments) and writes them to --out. The
files hold the cluster's secrets: --redact replaces every secret value with
REDACTED for review or GitOps.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if out == "" {
				return fmt.Errorf("--out DIR is required: the folder to write the configs to")
			}
			return g.withRuntime(cmd.Context(), "ohmytalos talos-config", func(s *spec.Spec, rt *runtime) error {
				return writeConfigs(cmd, rt, out, redact)
			})
		},
	}
	c.Flags().StringVar(&out, "out", "", "folder to write the configs to")
	c.Flags().BoolVar(&redact, "redact", false, "replace secret values with REDACTED")
	return c
}

// writeConfigs renders every group's config into out, mode 0600.
func writeConfigs(cmd *cobra.Command, rt *runtime, out string, redact bool) error {
	rendered, err := steps.RenderConfigs(cmd.Context(), rt.deps, rt.env)
	if err != nil {
		return fmt.Errorf("%s", rt.redact(err.Error()))
	}
	if err := os.MkdirAll(out, 0o700); err != nil {
		return err
	}
	names := make([]string, 0, len(rendered))
	for n := range rendered {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		data := rendered[n].Config
		if redact {
			if data, err = talos.Redact(data); err != nil {
				return err
			}
		}
		p := filepath.Join(out, n+".yaml")
		target, err := privatefile.Write(p, data)
		if err != nil {
			return err
		}
		fmt.Fprintf(cmd.OutOrStdout(), "wrote %s: %s, %d bytes\n", privatefile.Describe(p, target), rendered[n].Role, len(data))
		for _, w := range rendered[n].PatchWarnings {
			fmt.Fprintf(cmd.ErrOrStderr(), "warning: %s: %s\n", n, w)
		}
	}
	return writeAddonManifests(cmd, rt, out, redact)
}
