package etcdbackup_test

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"filippo.io/age"

	"github.com/ohmytalos/ohmytalos/internal/etcdbackup"
	"github.com/ohmytalos/ohmytalos/internal/sandbox/talosfake"
	"github.com/ohmytalos/ohmytalos/internal/sandbox/talosfake/fixture"
	"github.com/ohmytalos/ohmytalos/internal/talos/talosapi"
)

// startNodes starts control planes of one generated cluster in a fresh fake
// registry: a registry is one site, so a second one is a cluster rebuilt
// after the first was lost.
func startNodes(t *testing.T, fx *fixture.Cluster, ids ...int64) (*talosfake.Cluster, []*talosfake.Node) {
	t.Helper()
	tf := talosfake.NewCluster(talosfake.ClusterOptions{ServicesDelay: 10 * time.Millisecond})
	pfx := fixture.LoopbackPrefix()
	var nodes []*talosfake.Node
	for _, id := range ids {
		n, err := tf.StartNode(t.Context(), talosfake.NodeOptions{
			ServerID: id, Name: fmt.Sprintf("plain-cp-%d", id), PublicIP: fmt.Sprintf("%s%d", pfx, id),
			PrivateIP: fmt.Sprintf("10.0.1.%d", id), Port: -1, MachineConfig: fx.ControlPlane,
		})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(n.Stop)
		<-n.Ready()
		nodes = append(nodes, n)
	}
	return tf, nodes
}

// TestRestoreBootstrapsANewClusterFromASnapshot takes an encrypted snapshot
// of a bootstrapped three-node etcd (each endpoint in turn: the first is
// down), decrypts it and bootstraps a rebuilt control plane from it: the
// restored etcd runs as a single new member and carries the old keyspace.
func TestRestoreBootstrapsANewClusterFromASnapshot(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	fx, err := fixture.New("plain", fixture.Options{})
	if err != nil {
		t.Fatal(err)
	}
	old, nodes := startNodes(t, fx, 11, 12, 13)
	c, err := talosapi.Connect(ctx, fx.Talosconfig, nodes[0].Endpoint())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.BootstrapOnce(ctx); err != nil {
		t.Fatal(err)
	}
	waitMembers(ctx, t, c, 3)
	before := old.EtcdMembers("plain")

	id, err := age.GenerateX25519Identity()
	if err != nil {
		t.Fatal(err)
	}
	recipients, _, err := etcdbackup.Recipients(id.Recipient().String(), nil)
	if err != nil {
		t.Fatal(err)
	}
	endpoints := []string{"127.0.0.1:1", nodes[1].Endpoint()}
	snap, err := etcdbackup.Take(ctx, fx.Talosconfig, endpoints, recipients)
	if err != nil {
		t.Fatal(err)
	}
	if snap.Endpoint != nodes[1].Endpoint() || bytes.Contains(snap.Encrypted, []byte("plain-cp-11")) {
		t.Fatalf("snapshot from %s, plaintext inside: %v", snap.Endpoint, bytes.Contains(snap.Encrypted, []byte("plain-cp-11")))
	}
	plain, err := etcdbackup.Decrypt(snap.Encrypted, id)
	if err != nil || int64(len(plain)) != snap.Size {
		t.Fatalf("decrypt: %d bytes, %v", len(plain), err)
	}

	// Disaster: every control plane is gone. A rebuilt one (same secrets
	// bundle, fresh disks) is bootstrapped from the snapshot.
	for _, n := range nodes {
		n.Stop()
	}
	rebuilt, fresh := startNodes(t, fx, 21)
	if err := etcdbackup.Restore(ctx, fx.Talosconfig, fresh[0].Endpoint(), plain); err != nil {
		t.Fatal(err)
	}
	if got := rebuilt.RestoredFrom("plain"); !slices.Equal(got, before) {
		t.Errorf("restored keyspace = %v, want the old cluster's %v", got, before)
	}
	if got := rebuilt.EtcdMembers("plain"); !slices.Equal(got, []string{"plain-cp-21"}) {
		t.Errorf("members after restore = %v, want the rebuilt node alone", got)
	}

	// A second restore over the running etcd is refused, not applied.
	err = etcdbackup.Restore(ctx, fx.Talosconfig, fresh[0].Endpoint(), plain)
	if err == nil || !strings.Contains(err.Error(), "not empty") {
		t.Errorf("restore over a live etcd: %v", err)
	}
}

func waitMembers(ctx context.Context, t *testing.T, c *talosapi.Client, want int) {
	t.Helper()
	for {
		cctx, cancel := context.WithTimeout(ctx, time.Second)
		m, err := c.EtcdMembers(cctx)
		cancel()
		if err == nil && len(m) == want {
			return
		}
		select {
		case <-ctx.Done():
			t.Fatalf("etcd members = %v, %v; want %d", m, err, want)
		case <-time.After(50 * time.Millisecond):
		}
	}
}

func TestVerifyRejectsDamagedSnapshots(t *testing.T) {
	good := make([]byte, 4096)
	copy(good[16:], []byte{0xED, 0xDA, 0x0C, 0xED})
	sum := sha256sum(good)
	cases := map[string]struct {
		snap []byte
		want string
	}{
		"good":      {append(append([]byte{}, good...), sum...), ""},
		"short":     {[]byte("x"), "not an etcd database"},
		"not bbolt": {append(make([]byte, 4096), sum...), "not an etcd database"},
		"damaged":   {append(append(append([]byte{}, good[:4095]...), 1), sum...), "checksum"},
	}
	for name, tc := range cases {
		err := etcdbackup.Verify(tc.snap)
		if (tc.want == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), tc.want)) {
			t.Errorf("%s: %v, want %q", name, err, tc.want)
		}
	}
}
