// Package etcdbackup takes etcd snapshots over the Talos API, encrypted with
// age as they stream (no plaintext copy ever reaches the disk), and restores
// a cluster from one: the snapshot is uploaded to a control plane that was
// not bootstrapped yet, which then bootstraps etcd from it.
package etcdbackup

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"filippo.io/age"
	"filippo.io/age/armor"
	clientconfig "github.com/siderolabs/talos/pkg/machinery/client/config"

	"github.com/ohmytalos/ohmytalos/internal/talos/talosapi"
)

// Recipients parses the age recipients a snapshot is encrypted to: the
// cluster's own (the public key of the state's identity) and the extra
// ones given with --recipient (age1... X25519 keys). Duplicates are dropped.
func Recipients(own string, extra []string) ([]age.Recipient, []string, error) {
	var (
		out  []age.Recipient
		keys []string
	)

	seen := map[string]bool{}

	for i, s := range append([]string{own}, extra...) {
		s = strings.TrimSpace(s)
		if s == "" || seen[s] {
			continue
		}

		r, err := age.ParseX25519Recipient(s)
		if err != nil {
			field := "the cluster's age recipient"
			if i > 0 {
				field = "--recipient"
			}

			return nil, nil, fmt.Errorf("%s %q is not an age X25519 public key (%w): pass the age1... line age-keygen prints as \"public key\"", field, s, err)
		}

		seen[s] = true
		out = append(out, r)
		keys = append(keys, s)
	}

	if len(out) == 0 {
		return nil, nil, errors.New("no age recipient: the snapshot would be unreadable; pass --recipient age1... or let ohmytalos load the state's identity")
	}

	return out, keys, nil
}

// Endpoints lists the Talos API endpoints of the talosconfig's current
// context: the control planes, in the order they were written.
func Endpoints(talosconfig []byte) ([]string, error) {
	cfg, err := clientconfig.FromBytes(talosconfig)
	if err != nil {
		return nil, fmt.Errorf("read talosconfig: %w; regenerate it with \"ohmytalos apply\"", err)
	}

	ctx, ok := cfg.Contexts[cfg.Context]
	if !ok || ctx == nil || len(ctx.Endpoints) == 0 {
		return nil, fmt.Errorf("talosconfig context %q lists no endpoints: run \"ohmytalos apply\" so the control planes are recorded", cfg.Context)
	}

	return append([]string(nil), ctx.Endpoints...), nil
}

// Snapshot is an encrypted etcd snapshot, held in memory.
type Snapshot struct {
	// Encrypted is the age file (binary format, as `age` writes by default).
	Encrypted []byte
	// Size is the plaintext snapshot's size in bytes.
	Size int64
	// Endpoint is the control plane that served it.
	Endpoint string
}

// Take asks each endpoint in turn for an etcd snapshot and returns the
// first complete one (its trailing SHA-256 checked), encrypted to
// recipients. A node that fails (down, no quorum, a cut stream) is skipped
// and named in the error when every one fails.
func Take(ctx context.Context, talosconfig []byte, endpoints []string, recipients []age.Recipient) (Snapshot, error) {
	if len(endpoints) == 0 {
		return Snapshot{}, errors.New("take etcd snapshot: no control plane endpoint to ask; run \"ohmytalos apply\" first")
	}

	var errs []string

	for _, ep := range endpoints {
		snap, err := takeFrom(ctx, talosconfig, ep, recipients)
		if err == nil {
			return snap, nil
		}

		errs = append(errs, err.Error())

		if ctx.Err() != nil {
			break
		}
	}

	return Snapshot{}, fmt.Errorf("take etcd snapshot: no control plane served one: %s; check the control planes with \"ohmytalos doctor --check etcd\"", strings.Join(errs, "; "))
}

// takeFrom streams one node's snapshot through age into memory.
func takeFrom(ctx context.Context, talosconfig []byte, endpoint string, recipients []age.Recipient) (Snapshot, error) {
	c, err := talosapi.Connect(ctx, talosconfig, endpoint)
	if err != nil {
		return Snapshot{}, err
	}
	defer c.Close() //nolint:errcheck // nothing to do about a failed close

	var buf bytes.Buffer

	w, err := age.Encrypt(&buf, recipients...)
	if err != nil {
		return Snapshot{}, fmt.Errorf("encrypt snapshot: %w", err)
	}

	n, err := c.EtcdSnapshot(ctx, w)
	if err != nil {
		return Snapshot{}, err
	}

	if err := w.Close(); err != nil {
		return Snapshot{}, fmt.Errorf("encrypt snapshot: %w", err)
	}

	return Snapshot{Encrypted: buf.Bytes(), Size: n, Endpoint: endpoint}, nil
}

// Decrypt opens an age file (binary or armored) with the identities.
func Decrypt(ciphertext []byte, identities ...age.Identity) ([]byte, error) {
	var r io.Reader = bytes.NewReader(ciphertext)
	if bytes.HasPrefix(ciphertext, []byte(armor.Header)) {
		r = armor.NewReader(r)
	}

	d, err := age.Decrypt(r, identities...)
	if err != nil {
		return nil, fmt.Errorf("decrypt snapshot: %w; use the identity of the state that took it (OHMYTALOS_AGE_KEY_FILE) or a --recipient's key", err)
	}

	b, err := io.ReadAll(d)
	if err != nil {
		return nil, fmt.Errorf("decrypt snapshot: %w", err)
	}

	return b, nil
}

// Restore uploads a plaintext snapshot to the control plane at endpoint,
// which must not be bootstrapped yet, and bootstraps etcd from it (Talos'
// disaster recovery: EtcdRecover, then Bootstrap with recover_etcd).
func Restore(ctx context.Context, talosconfig []byte, endpoint string, snapshot []byte) error {
	c, err := talosapi.Connect(ctx, talosconfig, endpoint)
	if err != nil {
		return err
	}
	defer c.Close() //nolint:errcheck // nothing to do about a failed close

	if err := Verify(snapshot); err != nil {
		return err
	}

	if err := c.WaitReady(ctx); err != nil {
		return err
	}

	if err := c.EtcdRecover(ctx, bytes.NewReader(snapshot)); err != nil {
		return err
	}

	if err := c.BootstrapRecover(ctx); err != nil {
		return err
	}

	return waitEtcd(ctx, c)
}

// waitEtcd waits until etcd answers on the node: machined accepts the
// Bootstrap before etcd starts, and a restore that fails (a snapshot etcd
// rejects) only shows as an etcd that never comes up.
func waitEtcd(ctx context.Context, c *talosapi.Client) error {
	var last error

	for {
		callCtx, cancel := context.WithTimeout(ctx, 2*time.Second)
		members, err := c.EtcdMembers(callCtx)

		cancel()

		if err == nil && len(members) > 0 {
			return nil
		}

		last = err

		select {
		case <-ctx.Done():
			return fmt.Errorf("etcd on %s did not start from the snapshot (last error: %v): read its log with \"talosctl -n %s logs etcd\"; "+
				"a rejected snapshot needs a fresh control plane (wipe EPHEMERAL) before another try", c.Endpoint(), last, c.Endpoint())
		case <-time.After(250 * time.Millisecond):
		}
	}
}

// boltMagic is bbolt's meta page magic; the meta page starts after the
// 16-byte page header (go.etcd.io/bbolt page.go, db.go).
const boltMagic = 0xED0CDAED

// Verify checks a plaintext snapshot before it is uploaded, as etcdutl
// does on restore: a bbolt database (the meta page's magic) followed by
// the SHA-256 of its bytes.
func Verify(snapshot []byte) error {
	if len(snapshot) < 4096+sha256.Size || binary.LittleEndian.Uint32(snapshot[16:]) != boltMagic {
		return errors.New("snapshot is not an etcd database (no bbolt header): pass a file written by \"ohmytalos etcd snapshot\" or talosctl etcd snapshot")
	}

	body, sum := snapshot[:len(snapshot)-sha256.Size], snapshot[len(snapshot)-sha256.Size:]
	if got := sha256.Sum256(body); !bytes.Equal(got[:], sum) {
		return errors.New("snapshot checksum does not match its content: the file is damaged; use another snapshot")
	}

	return nil
}
