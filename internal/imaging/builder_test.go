package imaging

import (
	"bytes"
	"context"
	"maps"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/hetznercloud/hcloud-go/v2/hcloud"

	"github.com/ohmytalos/ohmytalos/internal/sandbox/factoryfake"
)

func TestColdBuildThenWarmReuse(t *testing.T) {
	sb := newSandbox(t, 1, nil)
	cp := sb.schematic("siderolabs/tailscale")
	worker := sb.schematic("siderolabs/iscsi-tools", "siderolabs/util-linux-tools")
	var reqs []Request
	for _, id := range []string{cp, worker} {
		for _, arch := range []string{"amd64", "arm64"} {
			reqs = append(reqs, sb.request(id, arch))
		}
	}
	log := &eventLog{}
	b := sb.builder(log)
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()

	ids, err := b.Ensure(ctx, reqs)
	if err != nil {
		t.Fatalf("cold Ensure: %v", err)
	}
	if len(ids) != 4 {
		t.Fatalf("got %d snapshots, want 4: %v", len(ids), ids)
	}
	// The four builds share one server-type lookup (catalog.go).
	if got := sb.fake.Stats().ByRoute["GET /server_types"]; got != 1 {
		t.Errorf("four builds listed the server types %d times, want once", got)
	}
	seen := map[int64]bool{}
	for _, r := range reqs {
		id := ids[r.Key]
		if id == 0 || seen[id] {
			t.Fatalf("snapshot ID %d for %s is missing or shared", id, r.Key)
		}
		seen[id] = true
		img, _, err := sb.client.Image.GetByID(ctx, id)
		if err != nil || img == nil {
			t.Fatalf("get image %d: %v", id, err)
		}
		want := Labels(r.Key)
		want["created-by"] = "ohmytalos-test"
		if !maps.Equal(img.Labels, want) {
			t.Errorf("image %d labels = %v, want %v", id, img.Labels, want)
		}
		if img.Description != Description(r.Key) || img.Type != hcloud.ImageTypeSnapshot || img.Status != hcloud.ImageStatusAvailable {
			t.Errorf("image %d: %q %s %s", id, img.Description, img.Type, img.Status)
		}
		if img.Architecture != hcloudArch(r.Key.Arch) {
			t.Errorf("image %d architecture %s for %s", id, img.Architecture, r.Key.Arch)
		}
		found, err := b.Find(ctx, r.Key)
		if err != nil || found == nil || found.ID != id {
			t.Errorf("Find(%s) = %v, %v; want image %d", r.Key, found, err, id)
		}
		// Progress reached the full image with a known total.
		writes := log.of(r.Key, StageWrite)
		if len(writes) == 0 {
			t.Fatalf("no write events for %s", r.Key)
		}
		last := writes[len(writes)-1]
		if last.Bytes != factoryfake.ImageSize || last.Total != factoryfake.ImageSize || last.Fraction != 1 {
			t.Errorf("last write event for %s: bytes %d total %d fraction %v", r.Key, last.Bytes, last.Total, last.Fraction)
		}
		if done := log.of(r.Key, StageDone); len(done) != 1 || done[0].SnapshotID != id {
			t.Errorf("done events for %s: %+v", r.Key, done)
		}
	}

	// What ran in each rescue system, and what landed on its disk.
	boots := sb.hooks.records()
	if len(boots) != 4 {
		t.Fatalf("%d rescue boots, want 4", len(boots))
	}
	byBuildKey := map[string]Request{}
	for _, r := range reqs {
		byBuildKey[buildKey(r.Key)] = r
	}
	for _, boot := range boots {
		if boot.startErr != nil {
			t.Fatalf("rescue fake for server %d: %v", boot.info.ID, boot.startErr)
		}
		r, ok := byBuildKey[boot.info.Labels[LabelBuildKey]]
		if !ok {
			t.Fatalf("server %d has no build key label: %v", boot.info.ID, boot.info.Labels)
		}
		wantType := map[string]string{"amd64": "cx23", "arm64": "cax11"}[r.Key.Arch]
		if boot.info.ServerType != wantType || boot.info.Location != "fsn1" {
			t.Errorf("server for %s is %s in %s, want %s in fsn1", r.Key, boot.info.ServerType, boot.info.Location, wantType)
		}
		cmd, _ := writeCommand(r.ImageURL)
		want := []string{discardCommand, cmd, syncCommand}
		if got := boot.srv.Commands(); !slicesEqual(got, want) {
			t.Errorf("commands for %s:\n got %q\nwant %q", r.Key, got, want)
		}
		disk, err := os.ReadFile(boot.disk)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(disk, factoryfake.DiskImage(r.Key.SchematicID, r.Key.TalosVersion, r.Key.Arch)) {
			t.Errorf("disk of %s does not hold its factory image", r.Key)
		}
	}
	sb.assertNoTemporaries(t)
	if n := sb.fake.Counts()["images"]; n != 4 {
		t.Errorf("%d snapshots exist, want 4", n)
	}

	// Warm run: everything is reused, no server is created.
	creates := sb.fake.Stats().ByRoute["POST /servers"]
	warmLog := &eventLog{}
	again, err := sb.builder(warmLog).Ensure(ctx, reqs)
	if err != nil {
		t.Fatalf("warm Ensure: %v", err)
	}
	if !maps.Equal(again, ids) {
		t.Errorf("warm run IDs %v, want %v", again, ids)
	}
	if got := sb.fake.Stats().ByRoute["POST /servers"]; got != creates {
		t.Errorf("warm run created %d servers", got-creates)
	}
	if len(sb.hooks.records()) != 4 {
		t.Error("warm run booted a rescue system")
	}
	for _, r := range reqs {
		if ev := warmLog.of(r.Key, StageReused); len(ev) != 1 || ev[0].SnapshotID != ids[r.Key] {
			t.Errorf("reused events for %s: %+v", r.Key, ev)
		}
	}
}

func TestFindRejectsDuplicatesAndForeignSchematics(t *testing.T) {
	sb := newSandbox(t, 2, nil)
	ctx := t.Context()
	id := sb.schematic("siderolabs/tailscale")
	k := Key{SchematicID: id, TalosVersion: testVersion, Arch: "amd64"}
	b := sb.builder(nil)

	server := plantServer(t, sb, "plain", nil)
	snap := func(desc string) {
		t.Helper()
		res, _, err := sb.client.Server.CreateImage(ctx, server, &hcloud.ServerCreateImageOpts{
			Type: hcloud.ImageTypeSnapshot, Description: hcloud.Ptr(desc), Labels: Labels(k)})
		if err != nil {
			t.Fatal(err)
		}
		if err := sb.client.Action.WaitFor(ctx, res.Action); err != nil {
			t.Fatal(err)
		}
	}
	// Same 63-character label prefix, different last character: not ours.
	other := k
	other.SchematicID = id[:63] + string("0123456789abcdef"[(strings.IndexByte("0123456789abcdef", id[63])+1)%16])
	snap(Description(other))
	if img, err := b.Find(ctx, k); err != nil || img != nil {
		t.Fatalf("Find matched a snapshot of another schematic: %v, %v", img, err)
	}
	snap(Description(k))
	if img, err := b.Find(ctx, k); err != nil || img == nil {
		t.Fatalf("Find = %v, %v; want the snapshot", img, err)
	}
	snap(Description(k))
	if _, err := b.Find(ctx, k); err == nil || !strings.Contains(err.Error(), "found 2 snapshots") {
		t.Fatalf("Find with two snapshots: err = %v", err)
	}
	if _, err := b.Find(ctx, Key{SchematicID: "abc", TalosVersion: testVersion, Arch: "amd64"}); err == nil {
		t.Error("Find accepted a malformed schematic ID")
	}
}

func TestSweepRemovesLeftovers(t *testing.T) {
	sb := newSandbox(t, 3, nil)
	ctx := t.Context()
	k := Key{SchematicID: strings.Repeat("ab", 32), TalosVersion: testVersion, Arch: "arm64"}
	b := sb.builder(nil)
	tmp := b.temporaryLabels(k)
	plantServer(t, sb, "leftover-server", tmp)
	keep := plantServer(t, sb, "production-node", map[string]string{LabelManagedBy: managedByValue})
	_, pub, err := newSSHKey()
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := sb.client.SSHKey.Create(ctx, hcloud.SSHKeyCreateOpts{Name: "leftover-key", PublicKey: pub, Labels: tmp}); err != nil {
		t.Fatal(err)
	}

	swept, err := b.Sweep(ctx, false)
	deleted := swept.Deleted
	if err != nil {
		t.Fatalf("Sweep: %v", err)
	}
	want := []string{"server leftover-server", "ssh key leftover-key"}
	if !slicesEqual(deleted, want) {
		t.Errorf("Sweep deleted %q, want %q", deleted, want)
	}
	servers := sb.fake.Servers()
	if len(servers) != 1 || servers[0].ID != keep.ID {
		t.Errorf("servers after sweep: %+v", servers)
	}
	if n := sb.fake.Counts()["ssh_keys"]; n != 0 {
		t.Errorf("%d ssh keys after sweep", n)
	}
	if again, err := b.Sweep(ctx, false); err != nil || len(again.Deleted) != 0 {
		t.Errorf("second sweep: %q, %v", again, err)
	}
}

func TestInterruptedBuildIsRestarted(t *testing.T) {
	sb := newSandbox(t, 4, nil)
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	r := sb.request(sb.schematic("siderolabs/tailscale"), "amd64")
	b := sb.builder(nil)
	// A killed run left its temporary server behind.
	plantServer(t, sb, "killed-build", b.temporaryLabels(r.Key))

	ids, err := b.Ensure(ctx, []Request{r})
	if err != nil || ids[r.Key] == 0 {
		t.Fatalf("Ensure: %v, %v", ids, err)
	}
	sb.assertNoTemporaries(t)
}

// plantServer creates a server directly through the API.
func plantServer(t *testing.T, sb *sandbox, name string, labels map[string]string) *hcloud.Server {
	t.Helper()
	res, _, err := sb.client.Server.Create(t.Context(), hcloud.ServerCreateOpts{
		Name: name, ServerType: &hcloud.ServerType{Name: "cx23"}, Image: &hcloud.Image{Name: "debian-12"},
		Location: &hcloud.Location{Name: "fsn1"}, StartAfterCreate: hcloud.Ptr(false), Labels: labels,
	})
	if err != nil {
		t.Fatalf("plant server %s: %v", name, err)
	}
	if err := sb.client.Action.WaitFor(t.Context(), res.Action); err != nil {
		t.Fatal(err)
	}
	return res.Server
}

func slicesEqual(a, b []string) bool {
	return strings.Join(a, "\x00") == strings.Join(b, "\x00") && len(a) == len(b)
}
