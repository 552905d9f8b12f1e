package sandbox_test

import (
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

// Deleting a server takes its Talos node with it, disk and all: once the
// last etcd member's server is gone, that etcd is gone too, as on Hetzner
// (the sandbox's ServerDeleted hook forgets the server).
func TestDeletedServerLeavesNoTalosNode(t *testing.T) {
	ctx, work, sb, c := startSandbox(t)
	fx, err := fixture.New("gone", fixture.Options{})
	if err != nil {
		t.Fatal(err)
	}
	builder, _, err := c.Server.Create(ctx, hcloud.ServerCreateOpts{Name: "builder", ServerType: &hcloud.ServerType{Name: "cx23"},
		Image: &hcloud.Image{Name: "debian-12"}, Location: &hcloud.Location{Name: "fsn1"}, StartAfterCreate: hcloud.Ptr(false)})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Action.WaitFor(ctx, builder.Action); err != nil {
		t.Fatal(err)
	}
	disk := filepath.Join(work, fmt.Sprintf("server-%d.disk", builder.Server.ID))
	if err := os.WriteFile(disk, factoryfake.DiskImage(strings.Repeat("5e", 32), "v1.13.9", "amd64"), 0o600); err != nil {
		t.Fatal(err)
	}
	img, _, err := c.Server.CreateImage(ctx, builder.Server, &hcloud.ServerCreateImageOpts{Type: hcloud.ImageTypeSnapshot})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Action.WaitFor(ctx, img.Action); err != nil {
		t.Fatal(err)
	}
	cp, _, err := c.Server.Create(ctx, hcloud.ServerCreateOpts{Name: "gone-cp-1", ServerType: &hcloud.ServerType{Name: "cx23"},
		Image: img.Image, Location: &hcloud.Location{Name: "fsn1"}, UserData: string(fx.ControlPlane)})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Action.WaitFor(ctx, append([]*hcloud.Action{cp.Action}, cp.NextActions...)...); err != nil {
		t.Fatal(err)
	}
	tc, err := talosapi.Connect(ctx, fx.Talosconfig, cp.Server.PublicNet.IPv4.IP.String())
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

	del, _, err := c.Server.DeleteWithResult(ctx, cp.Server)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Action.WaitFor(ctx, del.Action); err != nil {
		t.Fatal(err)
	}
	if sb.Talos.Node(cp.Server.ID) != nil {
		t.Error("the deleted server still runs its Talos node")
	}
	if got := sb.Talos.EtcdMembers(fx.Name); len(got) != 0 {
		t.Errorf("etcd of a cluster whose only server was deleted still lists %v", got)
	}
}
