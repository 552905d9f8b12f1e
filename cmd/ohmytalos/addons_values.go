package main

import (
	"bytes"
	"fmt"
	"os"
	"strings"

	"github.com/spf13/cobra"
	"go.yaml.in/yaml/v3"

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
			out, err := valuesDocument(vs)
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

// valuesDocument writes values as one YAML document, nested by their
// dotted paths, in their order, with "# why" above each.
func valuesDocument(vs []charts.Value) ([]byte, error) {
	root := &yaml.Node{Kind: yaml.MappingNode}
	for _, v := range vs {
		parts := strings.Split(v.Path, ".")
		m := root
		for _, p := range parts[:len(parts)-1] {
			m = childMapping(m, p)
		}
		var val yaml.Node
		if err := val.Encode(v.Value); err != nil {
			return nil, fmt.Errorf("%s: %w", v.Path, err)
		}
		why := v.Why
		if v.Required {
			why += " (required on Talos on Hetzner)"
		}
		key := &yaml.Node{Kind: yaml.ScalarNode, Value: parts[len(parts)-1], HeadComment: why}
		m.Content = append(m.Content, key, &val)
	}
	var b bytes.Buffer
	enc := yaml.NewEncoder(&b)
	enc.SetIndent(2)
	if err := enc.Encode(&yaml.Node{Kind: yaml.DocumentNode, Content: []*yaml.Node{root}}); err != nil {
		return nil, err
	}
	return b.Bytes(), enc.Close()
}

// childMapping is the mapping under key in m, added when missing.
func childMapping(m *yaml.Node, key string) *yaml.Node {
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key && m.Content[i+1].Kind == yaml.MappingNode {
			return m.Content[i+1]
		}
	}
	c := &yaml.Node{Kind: yaml.MappingNode}
	m.Content = append(m.Content, &yaml.Node{Kind: yaml.ScalarNode, Value: key}, c)
	return c
}
