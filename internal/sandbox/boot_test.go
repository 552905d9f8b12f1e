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
)

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
	create := func(name string, img *hcloud.Image, start bool) *hcloud.Server {
		t.Helper()
		res, _, err := c.Server.Create(ctx, hcloud.ServerCreateOpts{Name: name, ServerType: &hcloud.ServerType{Name: "cx23"},
			Image: img, Location: &hcloud.Location{Name: "fsn1"}, UserData: string(cfg.Worker), StartAfterCreate: hcloud.Ptr(start)})
		if err != nil {
			t.Fatalf("create %s: %v", name, err)
		}
		if err := c.Action.WaitFor(ctx, append([]*hcloud.Action{res.Action}, res.NextActions...)...); err != nil {
			t.Fatal(err)
		}
		return res.Server
	}
	snapshot := func(s *hcloud.Server) *hcloud.Image {
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

	debian := create("debian", &hcloud.Image{Name: "debian-12"}, true)
	if sb.Talos.Node(debian.ID) != nil {
		t.Fatal("a Debian server runs Talos because its user_data is a machine config")
	}

	empty := snapshot(create("empty", &hcloud.Image{Name: "debian-12"}, false))
	if sb.Talos.Node(create("from-empty", empty, true).ID) != nil {
		t.Fatal("a server from a snapshot of an empty disk runs Talos")
	}

	builder := create("builder", &hcloud.Image{Name: "debian-12"}, false)
	id := strings.Repeat("5e", 32)
	// What the rescue system's xz | dd leaves on the disk.
	disk := filepath.Join(work, fmt.Sprintf("server-%d.disk", builder.ID))
	if err := os.WriteFile(disk, factoryfake.DiskImage(id, "v1.13.0", "amd64"), 0o600); err != nil {
		t.Fatal(err)
	}
	talos := create("talos", snapshot(builder), true)
	if sb.Talos.Node(talos.ID) == nil {
		t.Fatal("a server from a snapshot of a Talos disk runs no Talos node")
	}
	h, ok := factoryfake.ReadDiskHeader(filepath.Join(work, fmt.Sprintf("server-%d.disk", talos.ID)))
	if !ok || h.Schematic != id || h.Version != "v1.13.0" {
		t.Fatalf("disk of the server from the snapshot = %+v, %v; want the builder's Talos image", h, ok)
	}
}
