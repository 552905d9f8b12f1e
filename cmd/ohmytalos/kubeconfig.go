package main

import (
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/ohmytalos/ohmytalos/internal/kubeconfig"
	"github.com/ohmytalos/ohmytalos/internal/privatefile"
)

func newKubeconfigCmd(g *globals) *cobra.Command {
	return newSecretOutCmd(g, "kubeconfig", "kubeconfig", "Print or write the cluster's kubeconfig (stored encrypted)", true)
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
			st, err := g.clusterState()
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
