package main

import (
	"errors"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/ohmytalos/ohmytalos/internal/kubeconfig"
	"github.com/ohmytalos/ohmytalos/internal/privatefile"
)

func newInitCmd(g *globals) *cobra.Command {
	return &cobra.Command{
		Use:   "init",
		Short: "Interactive wizard: secrets, images, network, pools, bootstrap",
		Long: `init walks you through creating a cluster, step by step, and runs the real
provisioning code at each step. In a folder with an interrupted cluster it
resumes at the first unfinished step. With --sandbox everything runs against
built-in fakes: try the whole flow without a Hetzner account.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runInit(cmd, g)
		},
	}
}

func newCostCmd(g *globals) *cobra.Command {
	var asJSON bool
	var vat string
	c := &cobra.Command{
		Use:   "cost",
		Short: "Print the monthly and hourly cost of the spec, per pool and in total",
		Long: `cost prices every server, primary IP, load balancer, volume and snapshot the
spec asks for, net and gross. Prices come from the Hetzner API when a token
is available, otherwise from a dated offline price list (labelled as such).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runCost(cmd, g, asJSON, vat)
		},
	}
	c.Flags().BoolVar(&asJSON, "json", false, "print JSON for machines")
	c.Flags().StringVar(&vat, "vat", "", "VAT rate in percent to compute gross prices (default: the API's or the price list's)")
	return c
}

func newSchematicCmd(g *globals) *cobra.Command {
	c := &cobra.Command{
		Use:   "schematic",
		Short: "Work with Talos Image Factory schematics",
	}
	var register bool
	id := &cobra.Command{
		Use:   "id FILE...",
		Short: "Print the Image Factory schematic ID of each file (YAML or JSON), computed offline",
		Long: `id computes each schematic's ID exactly as the Image Factory does (SHA-256 of
its canonical YAML), offline. With --register it also posts the schematic to
the factory (OHMYTALOS_FACTORY_URL, default https://factory.talos.dev) and
fails if the factory's ID differs.`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runSchematicID(cmd, g, args, register)
		},
	}
	id.Flags().BoolVar(&register, "register", false, "also register the schematic with the Image Factory and compare IDs")
	c.AddCommand(id)
	return c
}

func newKubeconfigCmd(g *globals) *cobra.Command {
	return newSecretOutCmd(g, "kubeconfig", "kubeconfig", "Print or write the cluster's kubeconfig (stored encrypted)", true)
}

func newTalosconfigCmd(g *globals) *cobra.Command {
	return newSecretOutCmd(g, "talosconfig", "talosconfig", "Print or write the cluster's talosconfig (stored encrypted)", false)
}

func newSecretOutCmd(g *globals, use, secret, short string, mergeable bool) *cobra.Command {
	var out string
	var merge bool
	c := &cobra.Command{
		Use:   use,
		Short: short,
		Long: short + `.

It is decrypted from the state directory with your age identity. Without
--out it prints to stdout; --out FILE replaces FILE atomically with mode
0600 (through a symlink, its target).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			s, err := g.loadSpec()
			if err != nil {
				return err
			}
			st, err := g.openState(s.Name)
			if err != nil {
				return err
			}
			data, err := st.Secret(secret)
			if err != nil {
				return err
			}
			if merge {
				return mergeKubeconfig(cmd, data, out)
			}
			if out == "" {
				_, err = cmd.OutOrStdout().Write(data)
				return err
			}
			target, err := privatefile.Write(out, data)
			if err != nil {
				return err
			}
			fmt.Fprintf(cmd.ErrOrStderr(), "wrote %s\n", privatefile.Describe(out, target))
			return nil
		},
	}
	c.Flags().StringVar(&out, "out", "", "write to this file instead of stdout")
	if mergeable {
		c.Flags().BoolVar(&merge, "merge", false, "merge into the default kubeconfig ($KUBECONFIG or ~/.kube/config, or --out) and switch to its context; existing entries are kept, new ones renamed NAME-1 on a conflict, the old file backed up")
	}
	return c
}

var errNoTTY = errors.New("init is an interactive wizard and needs a terminal; in scripts and CI use \"ohmytalos plan\" and \"ohmytalos apply\"")

func mergeKubeconfig(cmd *cobra.Command, data []byte, out string) error {
	path := out
	if path == "" {
		p, err := kubeconfig.DefaultPath()
		if err != nil {
			return err
		}
		path = p
	}
	res, err := kubeconfig.Merge(path, data, time.Now())
	if err != nil {
		return err
	}
	w := cmd.ErrOrStderr()
	if res.Written == "" {
		fmt.Fprintf(w, "%s already holds this cluster; nothing changed; current context: %s\n", path, res.Context)
		return nil
	}
	if res.Backup != "" {
		fmt.Fprintf(w, "backed up the previous file to %s\n", res.Backup)
	}
	for _, r := range res.Renamed {
		fmt.Fprintf(w, "renamed %s: the name was taken by a different entry, which is kept\n", r)
	}
	fmt.Fprintf(w, "merged into %s; current context: %s\n", privatefile.Describe(path, res.Written), res.Context)
	return nil
}
