package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/ohmytalos/ohmytalos/internal/imaging"
	"github.com/ohmytalos/ohmytalos/internal/spec"
)

func newImagesCmd(g *globals) *cobra.Command {
	c := &cobra.Command{
		Use:   "images",
		Short: "Work with the Talos snapshots ohmytalos builds",
	}
	sweep := &cobra.Command{
		Use:   "sweep",
		Short: "Delete temporary servers, SSH keys and unfinished snapshots a crashed image build left",
		Long: `sweep finds, by label, the temporary resources of image builds (servers in
rescue mode, SSH keys, snapshots not yet published) and deletes them. Run it
when no build is running: it cannot tell a leftover from a build in progress
in another process. Finished snapshots are never touched.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return g.withRuntime(cmd.Context(), "ohmytalos images sweep", func(s *spec.Spec, rt *runtime) error {
				return sweepImages(cmd, s, rt)
			})
		},
	}
	c.AddCommand(sweep)
	return c
}

// sweepImages deletes what crashed image builds left.
func sweepImages(cmd *cobra.Command, s *spec.Spec, rt *runtime) error {
	hc, err := rt.deps.HCloud(cmd.Context(), s)
	if err != nil {
		return err
	}
	deleted, err := imaging.New(hc, imaging.Options{}).Sweep(cmd.Context())
	for _, d := range deleted {
		fmt.Fprintln(cmd.OutOrStdout(), "deleted", d)
	}
	if err != nil {
		return fmt.Errorf("%s", rt.redact(err.Error()))
	}
	if len(deleted) == 0 {
		fmt.Fprintln(cmd.OutOrStdout(), "no leftovers of image builds")
	}
	return nil
}
