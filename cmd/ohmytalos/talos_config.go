package main

import (
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"

	"github.com/spf13/cobra"

	"github.com/ohmytalos/ohmytalos/internal/privatefile"
	"github.com/ohmytalos/ohmytalos/internal/spec"
	"github.com/ohmytalos/ohmytalos/internal/talos"
	"github.com/ohmytalos/ohmytalos/steps"
)

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
	for _, n := range slices.Sorted(maps.Keys(rendered)) {
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
