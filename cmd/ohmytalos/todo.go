package main

import (
	"github.com/spf13/cobra"
)

func runInit(cmd *cobra.Command, g *globals) error { return errNotYet("the wizard") }
func runCost(cmd *cobra.Command, g *globals, asJSON bool, vat string) error {
	return errNotYet("cost")
}
func runSchematicID(cmd *cobra.Command, g *globals, files []string, register bool) error {
	return errNotYet("schematic id")
}
func mergeKubeconfig(cmd *cobra.Command, data []byte, out string) error {
	return errNotYet("--merge")
}
func newDoctorCmd(g *globals) *cobra.Command {
	return &cobra.Command{Use: "doctor", Short: "Diagnose the pitfalls no component reports",
		RunE: func(*cobra.Command, []string) error { return errNotYet("doctor") }}
}
func newDestroyCmd(g *globals) *cobra.Command {
	return &cobra.Command{Use: "destroy", Short: "Delete everything the cluster owns",
		RunE: func(*cobra.Command, []string) error { return errNotYet("destroy") }}
}
func newTalosConfigCmd(g *globals) *cobra.Command {
	return &cobra.Command{Use: "talos-config", Short: "Write the rendered Talos machine configs",
		RunE: func(*cobra.Command, []string) error { return errNotYet("talos-config") }}
}
func newSandboxCmd(g *globals) *cobra.Command {
	c := &cobra.Command{Use: "sandbox", Short: "Run the built-in fakes of Hetzner, Talos and the Image Factory"}
	c.AddCommand(&cobra.Command{Use: "serve", Short: "Serve the sandbox standalone",
		RunE: func(*cobra.Command, []string) error { return errNotYet("sandbox serve") }})
	return c
}
