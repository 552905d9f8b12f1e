package main

import (
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/ohmytalos/ohmytalos/internal/addons"
	"github.com/ohmytalos/ohmytalos/internal/charts"
)

func newAddonsCmd(g *globals) *cobra.Command {
	c := &cobra.Command{
		Use:   "addons",
		Short: "Show what ohmytalos sets in the add-ons' Helm charts",
	}
	c.AddCommand(newAddonsValuesCmd(g))
	return c
}

func newAddonsValuesCmd(g *globals) *cobra.Command {
	return &cobra.Command{
		Use:   "values NAME",
		Short: "Print ohmytalos's chart values of an add-on, with why each is there",
		Long: `Print the Helm values ohmytalos sets in an add-on's upstream chart for the
spec (--config), as YAML with a comment above each value saying why it is
there; values marked "required" are ones Talos on Hetzner needs, and
overriding one under addons.NAME.values gets a plan warning.

NAME is an add-on's spec key or name: cilium, hcloudCCM (hcloud-ccm),
hcloudCSI (hcloud-csi), longhorn, metricsServer (metrics-server), ingress.
No value holds a secret: the Hetzner token stays in the Secret
kube-system/hcloud, which the values name.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			s, err := g.loadSpec()
			if err != nil {
				return err
			}
			in := addons.Inputs{ClusterID: g.clusterIDIfAny(s.Name)}
			vs, err := addons.Values(s, in, args[0])
			if err != nil {
				return err
			}
			out, err := charts.Document(vs)
			if err != nil {
				return fmt.Errorf("print the values of %s: %w", args[0], err)
			}
			_, err = cmd.OutOrStdout().Write(out)
			return err
		},
	}
}

// clusterIDIfAny is the cluster's ID from its state when a state exists
// ("" otherwise): the CSI driver's volume labels carry it. It never
// creates a state.
func (g *globals) clusterIDIfAny(name string) string {
	if _, err := os.Stat(g.stateDirFor(name)); err != nil {
		return ""
	}
	st, err := g.openState(name)
	if err != nil {
		return ""
	}
	return st.ClusterID()
}
