package sandbox_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hetznercloud/hcloud-go/v2/hcloud"

	"github.com/ohmytalos/ohmytalos/internal/sandbox/factoryfake"
	"github.com/ohmytalos/ohmytalos/internal/sandbox/talosfake/fixture"
	"github.com/ohmytalos/ohmytalos/internal/talos/talosapi"
)

// createServer creates a cx23 in fsn1 from img with userData, powered on
// when start, and waits for its actions.
func createServer(t *testing.T, ctx context.Context, c *hcloud.Client, name string, img *hcloud.Image, userData []byte, start bool) *hcloud.Server {
	t.Helper()
	res, _, err := c.Server.Create(ctx, hcloud.ServerCreateOpts{Name: name, ServerType: &hcloud.ServerType{Name: "cx23"},
		Image: img, Location: &hcloud.Location{Name: "fsn1"}, UserData: string(userData), StartAfterCreate: hcloud.Ptr(start)})
	if err != nil {
		t.Fatalf("create %s: %v", name, err)
	}
	if err := c.Action.WaitFor(ctx, append([]*hcloud.Action{res.Action}, res.NextActions...)...); err != nil {
		t.Fatal(err)
	}
	return res.Server
}

// snapshot takes a snapshot of s's disk and waits for it.
func snapshot(t *testing.T, ctx context.Context, c *hcloud.Client, s *hcloud.Server) *hcloud.Image {
	t.Helper()
	res, _, err := c.Server.CreateImage(ctx, s, &hcloud.ServerCreateImageOpts{Type: hcloud.ImageTypeSnapshot})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Action.WaitFor(ctx, res.Action); err != nil {
		t.Fatal(err)
	}
	return res.Image
}

// writeTalosDisk leaves on s's disk what the rescue system's xz | dd
// leaves: a Talos image of schematic id at version.
func writeTalosDisk(t *testing.T, work string, s *hcloud.Server, id, version string) {
	t.Helper()
	disk := filepath.Join(work, fmt.Sprintf("server-%d.disk", s.ID))
	if err := os.WriteFile(disk, factoryfake.DiskImage(id, version, "amd64"), 0o600); err != nil {
		t.Fatal(err)
	}
}

// Only a disk holding a Talos image boots Talos: a Debian server with a
// machine config as user_data runs no Talos API, a snapshot of a disk the
// rescue system wrote a Talos image to does, and a snapshot of an empty
// disk does not.
func TestOnlyATalosDiskBootsTalos(t *testing.T) {
	ctx, work, sb, c := startSandbox(t)
	cfg, err := fixture.New("boot", fixture.Options{})
	if err != nil {
		t.Fatal(err)
	}
	debianImg := &hcloud.Image{Name: "debian-12"}

	debian := createServer(t, ctx, c, "debian", debianImg, cfg.Worker, true)
	if sb.Talos.Node(debian.ID) != nil {
		t.Fatal("a Debian server runs Talos because its user_data is a machine config")
	}

	empty := snapshot(t, ctx, c, createServer(t, ctx, c, "empty", debianImg, cfg.Worker, false))
	if sb.Talos.Node(createServer(t, ctx, c, "from-empty", empty, cfg.Worker, true).ID) != nil {
		t.Fatal("a server from a snapshot of an empty disk runs Talos")
	}

	builder := createServer(t, ctx, c, "builder", debianImg, cfg.Worker, false)
	id := strings.Repeat("5e", 32)
	writeTalosDisk(t, work, builder, id, "v1.13.0")
	talos := createServer(t, ctx, c, "talos", snapshot(t, ctx, c, builder), cfg.Worker, true)
	if sb.Talos.Node(talos.ID) == nil {
		t.Fatal("a server from a snapshot of a Talos disk runs no Talos node")
	}
	h, ok := factoryfake.ReadDiskHeader(filepath.Join(work, fmt.Sprintf("server-%d.disk", talos.ID)))
	if !ok || h.Schematic != id || h.Version != "v1.13.0" {
		t.Fatalf("disk of the server from the snapshot = %+v, %v; want the builder's Talos image", h, ok)
	}
}

// Deleting a server takes its Talos node with it, disk and all: once the
// last etcd member's server is gone, that etcd is gone too, as on Hetzner
// (the sandbox's ServerDeleted hook forgets the server).
func TestDeletedServerLeavesNoTalosNode(t *testing.T) {
	ctx, work, sb, c := startSandbox(t)
	fx, err := fixture.New("gone", fixture.Options{})
	if err != nil {
		t.Fatal(err)
	}
	builder := createServer(t, ctx, c, "builder", &hcloud.Image{Name: "debian-12"}, nil, false)
	writeTalosDisk(t, work, builder, strings.Repeat("5e", 32), "v1.13.9")
	cp := createServer(t, ctx, c, "gone-cp-1", snapshot(t, ctx, c, builder), fx.ControlPlane, true)
	tc, err := talosapi.Connect(ctx, fx.Talosconfig, cp.PublicNet.IPv4.IP.String())
	if err != nil {
		t.Fatal(err)
	}
	defer tc.Close()
	if err := tc.WaitReady(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := tc.BootstrapOnce(ctx); err != nil {
		t.Fatal(err)
	}
	if got := sb.Talos.EtcdMembers(fx.Name); len(got) != 1 {
		t.Fatalf("etcd members after bootstrap = %v", got)
	}

	del, _, err := c.Server.DeleteWithResult(ctx, cp)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Action.WaitFor(ctx, del.Action); err != nil {
		t.Fatal(err)
	}
	if sb.Talos.Node(cp.ID) != nil {
		t.Error("the deleted server still runs its Talos node")
	}
	if got := sb.Talos.EtcdMembers(fx.Name); len(got) != 0 {
		t.Errorf("etcd of a cluster whose only server was deleted still lists %v", got)
	}
}
