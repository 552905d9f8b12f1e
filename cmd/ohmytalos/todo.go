package main

import (
	"github.com/spf13/cobra"
)

func runInit(cmd *cobra.Command, g *globals) error { return errNotYet("the wizard") }
