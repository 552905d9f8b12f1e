package main

import "github.com/spf13/cobra"

func newTalosconfigCmd(g *globals) *cobra.Command {
	return newSecretOutCmd(g, "talosconfig", "talosconfig", "Print or write the cluster's talosconfig (stored encrypted)", false)
}
