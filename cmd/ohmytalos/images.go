package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/ohmytalos/ohmytalos/internal/imaging"
	"github.com/ohmytalos/ohmytalos/internal/spec"
)

func newImagesCmd(g *globals) *cobra.Command {
	var force bool
	c := &cobra.Command{
		Use:   "images",
		Short: "Work with the Talos snapshots ohmytalos builds",
	}
	sweep := &cobra.Command{
		Use:   "sweep",
		Short: "Delete temporary servers, SSH keys and unfinished snapshots a crashed image build left",
		Long: `sweep finds, by label, the temporary resources of image builds (servers in
rescue mode, SSH keys, snapshots not yet published) and deletes them. A build
in progress (in this or another process) renews a lease label on its
resources; those are kept and listed unless --force is given. Finished
snapshots are never touched.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return g.withRuntime(cmd.Context(), "ohmytalos images sweep", func(s *spec.Spec, rt *runtime) error {
				return sweepImages(cmd, s, rt, force)
			})
		},
	}
	sweep.Flags().BoolVar(&force, "force", false, "also delete the resources of builds still holding a lease (builds in progress fail)")
	c.AddCommand(sweep)
	return c
}

// sweepImages deletes what crashed image builds left.
func sweepImages(cmd *cobra.Command, s *spec.Spec, rt *runtime, force bool) error {
	hc, err := rt.deps.HCloud(cmd.Context(), s)
	if err != nil {
		return err
	}
	swept, err := imaging.New(hc, imaging.Options{}).Sweep(cmd.Context(), force)
	for _, d := range swept.Deleted {
		fmt.Fprintln(cmd.OutOrStdout(), "deleted", d)
	}
	for _, l := range swept.Live {
		fmt.Fprintln(cmd.OutOrStdout(), "kept", l, "of a build in progress; --force deletes it")
	}
	if err != nil {
		return fmt.Errorf("%s", rt.redact(err.Error()))
	}
	if len(swept.Deleted) == 0 && len(swept.Live) == 0 {
		fmt.Fprintln(cmd.OutOrStdout(), "no leftovers of image builds")
	}
	return nil
}
