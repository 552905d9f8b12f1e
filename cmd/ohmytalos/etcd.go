package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"

	"github.com/ohmytalos/ohmytalos/internal/etcdbackup"
	"github.com/ohmytalos/ohmytalos/internal/privatefile"
	"github.com/ohmytalos/ohmytalos/internal/state"
)

// errEtcdSandbox explains why the etcd commands refuse --sandbox: the
// in-process sandbox starts empty, so there is no etcd to back up.
var errEtcdSandbox = errors.New("--sandbox starts an empty in-process sandbox, which has no etcd yet: run \"ohmytalos sandbox serve\", apply with its environment, then run this command with the same environment and without --sandbox")

func newEtcdCmd(g *globals) *cobra.Command {
	c := &cobra.Command{
		Use:   "etcd",
		Short: "Take an encrypted etcd snapshot, or restore a cluster from one",
		Long: `etcd works with the cluster's etcd over the Talos API. "snapshot" writes an
age-encrypted snapshot; "restore" bootstraps a fresh control plane from one.
See docs/backup.md for the whole disaster recovery.`,
	}
	c.AddCommand(newEtcdSnapshotCmd(g), newEtcdRestoreCmd(g))
	return c
}

// snapshotFlags are etcd snapshot's flags.
type snapshotFlags struct {
	out        string
	recipients []string
	force      bool
	timeout    time.Duration
}

func newEtcdSnapshotCmd(g *globals) *cobra.Command {
	f := &snapshotFlags{}
	c := &cobra.Command{
		Use:   "snapshot --out FILE",
		Short: "Write an etcd snapshot, encrypted with age, taken from a healthy control plane",
		Long: `snapshot asks each control plane of the talosconfig in turn for an etcd
snapshot, checks its trailing SHA-256 and writes it encrypted with age to
FILE (atomically, mode 0600). The plaintext never touches the disk.

It is encrypted to the cluster's own age recipient (the public key of the
identity that encrypts the state: OHMYTALOS_AGE_KEY_FILE, SOPS' key file or
~/.config/ohmytalos/age-key.txt) and to every --recipient. Keep that identity
somewhere other than the cluster: it is what decrypts the snapshot
(age -d -i KEYFILE FILE > db.snapshot).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runEtcdSnapshot(cmd, g, f)
		},
	}
	c.Flags().StringVar(&f.out, "out", "", "file to write the encrypted snapshot to (required)")
	c.Flags().StringArrayVar(&f.recipients, "recipient", nil, "also encrypt to this age public key (age1...); repeatable")
	c.Flags().BoolVar(&f.force, "force", false, "replace FILE if it exists")
	c.Flags().DurationVar(&f.timeout, "timeout", 10*time.Minute, "give up after this long")
	return c
}

func runEtcdSnapshot(cmd *cobra.Command, g *globals, f *snapshotFlags) error {
	if g.sandbox {
		return errEtcdSandbox
	}
	if f.out == "" {
		return errors.New("--out is required: name the file the encrypted snapshot goes to, e.g. --out etcd-$(date +%F).snapshot.age")
	}
	if _, err := os.Lstat(f.out); err == nil && !f.force {
		return fmt.Errorf("--out %s already exists: pick another name, or pass --force to replace it", f.out)
	}
	st, err := g.lockedState("ohmytalos etcd snapshot")
	if err != nil {
		return err
	}
	defer st.Unlock()
	tc, own, err := talosconfigAndRecipient(st)
	if err != nil {
		return err
	}
	recipients, keys, err := etcdbackup.Recipients(own, f.recipients)
	if err != nil {
		return err
	}
	endpoints, err := etcdbackup.Endpoints(tc)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(cmd.Context(), f.timeout)
	defer cancel()
	snap, err := etcdbackup.Take(ctx, tc, endpoints, recipients)
	if err != nil {
		return err
	}
	target, err := privatefile.Write(f.out, snap.Encrypted)
	if err != nil {
		return fmt.Errorf("write snapshot: %w", err)
	}
	abs, err := filepath.Abs(target)
	if err != nil {
		abs = target // the state records the path as written
	}
	rec := etcdbackup.Record{Taken: time.Now().UTC(), File: abs, Endpoint: snap.Endpoint, Size: snap.Size, Recipients: keys}
	if err := etcdbackup.Save(st, rec); err != nil {
		return fmt.Errorf("snapshot written, but recording it in the state failed: %w", err)
	}
	fmt.Fprintf(cmd.OutOrStdout(), "etcd snapshot from %s: %d bytes, encrypted to %d recipient(s)\nwrote %s\n",
		snap.Endpoint, snap.Size, len(keys), privatefile.Describe(f.out, target))
	return nil
}

// talosconfigAndRecipient reads the stored talosconfig and the cluster's age
// recipient.
func talosconfigAndRecipient(st *state.Store) ([]byte, string, error) {
	tc, err := st.Secret("talosconfig")
	if err != nil {
		return nil, "", err
	}
	own, err := st.Recipient()
	if err != nil {
		return nil, "", err
	}
	return tc, own, nil
}
