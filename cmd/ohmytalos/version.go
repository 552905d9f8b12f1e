package main

import (
	"fmt"
	"runtime/debug"

	"github.com/spf13/cobra"

	"github.com/ohmytalos/ohmytalos/internal/spec"
)

// version is set at build time with -ldflags "-X main.version=...".
var version = "dev"

func newVersionCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the ohmytalos version, the Talos/Kubernetes versions it defaults to and the pinned add-on versions",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			v := version
			if bi, ok := debug.ReadBuildInfo(); ok && v == "dev" && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
				v = bi.Main.Version
			}
			fmt.Fprintf(cmd.OutOrStdout(), "ohmytalos %s\ndefault Talos %s, Kubernetes %s\n", v, spec.DefaultTalosVersion, spec.DefaultKubernetesVersion)
			for _, a := range spec.DefaultAddonVersions() {
				fmt.Fprintf(cmd.OutOrStdout(), "add-on %s %s\n", a.Key, a.Version)
			}
			return nil
		},
	}
}
