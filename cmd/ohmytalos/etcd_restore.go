package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/spf13/cobra"

	"github.com/ohmytalos/ohmytalos/internal/etcdbackup"
)

func newEtcdRestoreCmd(g *globals) *cobra.Command {
	var from, node string
	var timeout time.Duration
	c := &cobra.Command{
		Use:   "restore --from FILE --node IP",
		Short: "Bootstrap etcd on a fresh control plane from an encrypted snapshot",
		Long: `restore decrypts FILE with the state's age identity, uploads the snapshot to
the control plane at --node (which must have its machine config and must
not be bootstrapped: a new cluster, or control planes whose EPHEMERAL was
wiped) and bootstraps etcd from it. The other control planes then join.
A node whose etcd already runs refuses ("etcd data directory is not
empty"), so restore cannot overwrite a live etcd. See docs/backup.md.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if g.sandbox {
				return errEtcdSandbox
			}
			if from == "" || node == "" {
				return errors.New("--from and --node are required: the encrypted snapshot and the public IP of one fresh control plane")
			}
			st, err := g.lockedState("ohmytalos etcd restore")
			if err != nil {
				return err
			}
			defer st.Unlock()
			ct, err := os.ReadFile(from)
			if err != nil {
				return fmt.Errorf("--from: %w", err)
			}
			id, keyFile, err := st.Identity()
			if err != nil {
				return err
			}
			plain, err := etcdbackup.Decrypt(ct, id)
			if err != nil {
				return fmt.Errorf("%s with %s: %w", from, keyFile, err)
			}
			tc, err := st.Secret("talosconfig")
			if err != nil {
				return err
			}
			ctx, cancel := context.WithTimeout(cmd.Context(), timeout)
			defer cancel()
			if err := etcdbackup.Restore(ctx, tc, node, plain); err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "etcd on %s bootstrapped from %s (%d bytes); check it with \"ohmytalos doctor --check etcd\"\n", node, from, len(plain))
			return nil
		},
	}
	c.Flags().StringVar(&from, "from", "", "encrypted snapshot written by \"ohmytalos etcd snapshot\" (required)")
	c.Flags().StringVar(&node, "node", "", "public IP of the fresh control plane to bootstrap (required)")
	c.Flags().DurationVar(&timeout, "timeout", 10*time.Minute, "give up after this long")
	return c
}
