package hcloudfake_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/hetznercloud/hcloud-go/v2/hcloud"

	"github.com/ohmytalos/ohmytalos/internal/sandbox/hcloudfake"
)

func TestActionFailureSurfacesFromWaitFor(t *testing.T) {
	e, c := newPlainEnv(t)
	server := e.newServer(t, hcloud.ServerCreateOpts{Name: "builder", StartAfterCreate: hcloud.Ptr(false)})

	e.fake.FailActions("create_image", 1)
	img, _, err := c.Server.CreateImage(ctx(t), server, &hcloud.ServerCreateImageOpts{Type: hcloud.ImageTypeSnapshot})
	if err != nil {
		t.Fatal(err)
	}
	err = c.Action.WaitFor(ctx(t), img.Action)
	var aerr hcloud.ActionError
	if !errors.As(err, &aerr) || aerr.Code == "" || aerr.Message == "" {
		t.Fatalf("WaitFor = %v, want an ActionError with code and message", err)
	}
	if got, _, _ := c.Image.GetByID(ctx(t), img.Image.ID); got != nil {
		t.Errorf("failed snapshot still exists: %+v", got)
	}

	// The next one succeeds: creating, then available, with the server's data.
	img, _, err = c.Server.CreateImage(ctx(t), server, &hcloud.ServerCreateImageOpts{Type: hcloud.ImageTypeSnapshot,
		Description: hcloud.Ptr("talos v1.13.0 amd64"), Labels: map[string]string{"os": "talos", "arch": "amd64"}})
	if err != nil {
		t.Fatal(err)
	}
	if img.Image.Status != hcloud.ImageStatusCreating {
		t.Errorf("new snapshot status = %s, want creating", img.Image.Status)
	}
	e.wait(t, img.Action)
	snaps, err := c.Image.AllWithOpts(ctx(t), hcloud.ImageListOpts{Type: []hcloud.ImageType{hcloud.ImageTypeSnapshot},
		Architecture: []hcloud.Architecture{hcloud.ArchitectureX86}, ListOpts: hcloud.ListOpts{LabelSelector: "os=talos"}})
	if err != nil || len(snaps) != 1 {
		t.Fatalf("list snapshots: %d, %v", len(snaps), err)
	}
	s := snaps[0]
	if s.Status != hcloud.ImageStatusAvailable || s.Description != "talos v1.13.0 amd64" || s.DiskSize != 40 ||
		s.ImageSize <= 0 || s.CreatedFrom == nil || s.CreatedFrom.ID != server.ID {
		t.Errorf("snapshot = %+v", s)
	}
	if e.fake.Counts()["images"] != 1 {
		t.Errorf("counts = %v, want 1 snapshot", e.fake.Counts())
	}
}

func TestActionProgressOverTime(t *testing.T) {
	clk := newClock()
	e := newEnv(t, hcloudfake.Options{Now: clk.Now, ActionDuration: 10 * time.Second,
		Durations: map[string]time.Duration{"create_server": 20 * time.Second}})
	c := e.client
	res, _, err := c.Server.Create(ctx(t), hcloud.ServerCreateOpts{Name: "slow", ServerType: &hcloud.ServerType{Name: "cpx22"},
		Image: &hcloud.Image{Name: "debian-12"}, Location: &hcloud.Location{Name: "fsn1"}})
	if err != nil {
		t.Fatal(err)
	}
	clk.Add(5 * time.Second)
	a, _, err := c.Action.GetByID(ctx(t), res.Action.ID)
	if err != nil || a.Status != hcloud.ActionStatusRunning || a.Progress != 25 {
		t.Fatalf("after 5s of 20s: %+v, %v; want running at 25%%", a, err)
	}
	clk.Add(15 * time.Second)
	a, _, _ = c.Action.GetByID(ctx(t), res.Action.ID)
	if a.Status != hcloud.ActionStatusSuccess || a.Progress != 100 || a.Finished.IsZero() {
		t.Fatalf("after 20s: %+v, want success", a)
	}
	s, _, _ := c.Server.GetByID(ctx(t), res.Server.ID)
	if s.Status != hcloud.ServerStatusRunning {
		t.Errorf("server status = %s, want running", s.Status)
	}
	// Per-resource action listing as ResourceActionClient reads it.
	acts, err := c.Server.Action.All(ctx(t), hcloud.ActionListOpts{})
	if err != nil || len(acts) < 2 {
		t.Errorf("server actions = %d, %v; want create_server and start_server", len(acts), err)
	}
}

func TestRescueBootAndHooks(t *testing.T) {
	rec := &recorder{}
	e := newEnv(t, hcloudfake.Options{Hooks: rec})
	c := e.client
	pubText, _ := newPublicKey(t)
	key, _, err := c.SSHKey.Create(ctx(t), hcloud.SSHKeyCreateOpts{Name: "imaging", PublicKey: pubText})
	if err != nil {
		t.Fatal(err)
	}
	server := e.newServer(t, hcloud.ServerCreateOpts{Name: "img-builder", StartAfterCreate: hcloud.Ptr(false)})
	if events, _ := rec.snapshot(); len(events) != 0 {
		t.Fatalf("server created without start fired hooks: %v", events)
	}
	rescue, _, err := c.Server.EnableRescue(ctx(t), server, hcloud.ServerEnableRescueOpts{Type: hcloud.ServerRescueTypeLinux64, SSHKeys: []*hcloud.SSHKey{key}})
	if err != nil || rescue.RootPassword == "" {
		t.Fatalf("enable rescue: %v (password %q)", err, rescue.RootPassword)
	}
	e.wait(t, rescue.Action)
	on, _, err := c.Server.Poweron(ctx(t), server)
	if err != nil {
		t.Fatal(err)
	}
	e.wait(t, on)
	_, infos := rec.snapshot()
	if len(infos) != 1 || !infos[0].Rescue || len(infos[0].RescueSSHKeys) != 1 || infos[0].RescueSSHKeys[0] != strings.TrimSpace(pubText) {
		t.Fatalf("rescue boot hook = %+v", infos)
	}
	if got := e.fake.Servers(); len(got) != 1 || !got[0].Rescue {
		t.Errorf("Servers() = %+v, want one server in rescue", got)
	}
	// Rescue is consumed by the boot: a reset boots the installed system.
	reset, _, err := c.Server.Reset(ctx(t), server)
	if err != nil {
		t.Fatal(err)
	}
	e.wait(t, reset)
	_, infos = rec.snapshot()
	if len(infos) != 2 || infos[1].Rescue {
		t.Errorf("boot after rescue = %+v, want a normal boot", infos)
	}
	off, _, err := c.Server.Shutdown(ctx(t), server)
	if err != nil {
		t.Fatal(err)
	}
	e.wait(t, off)
	events, _ := rec.snapshot()
	if events[len(events)-1] != "off" {
		t.Errorf("events = %v, want a final power-off", events)
	}
	s, _, _ := c.Server.GetByID(ctx(t), server.ID)
	if s.Status != hcloud.ServerStatusOff || s.RescueEnabled {
		t.Errorf("server = %s rescue=%v, want off without rescue", s.Status, s.RescueEnabled)
	}
}
