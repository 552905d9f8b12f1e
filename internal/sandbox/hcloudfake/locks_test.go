package hcloudfake_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/hetznercloud/hcloud-go/v2/hcloud"

	"github.com/ohmytalos/ohmytalos/internal/sandbox/hcloudfake"
)

// A new action on a server while another runs on it is refused with 423
// locked, and hcloud-go hands the error back instead of retrying it.
func TestActionsLockTheirResource(t *testing.T) {
	clk := newClock()
	e := newEnv(t, hcloudfake.Options{Now: clk.Now, ActionDuration: time.Minute})
	c := e.client
	res, _, err := c.Server.Create(ctx(t), hcloud.ServerCreateOpts{Name: "a", ServerType: &hcloud.ServerType{Name: "cx23"},
		Image: &hcloud.Image{Name: "debian-12"}, Location: &hcloud.Location{Name: "fsn1"}, StartAfterCreate: hcloud.Ptr(false)})
	if err != nil {
		t.Fatal(err)
	}
	_, resp, err := c.Server.Poweron(ctx(t), res.Server)
	herr := apiErr(t, err, resp, hcloud.ErrorCodeLocked, http.StatusLocked)
	if herr.Message == "" {
		t.Fatal("locked error without a message")
	}
	if got := e.fake.Stats().ByRoute["POST /servers/{id}/actions/poweron"]; got != 1 {
		t.Fatalf("hcloud-go sent poweron %d times; it must not retry locked", got)
	}
	// Reading is never locked.
	if _, _, err := c.Server.GetByID(ctx(t), res.Server.ID); err != nil {
		t.Fatal(err)
	}
	clk.Add(2 * time.Minute)
	if _, _, err := c.Server.GetByID(ctx(t), res.Server.ID); err != nil { // the create finishes
		t.Fatal(err)
	}
	if _, _, err := c.Server.Poweron(ctx(t), res.Server); err != nil {
		t.Fatalf("poweron after the create finished: %v", err)
	}
}

// Attaching a volume locks the server it is attached to, not only the volume.
func TestVolumeAttachLocksTheServer(t *testing.T) {
	clk := newClock()
	e := newEnv(t, hcloudfake.Options{Now: clk.Now, Durations: map[string]time.Duration{"attach_volume": time.Minute}})
	c := e.client
	srv := e.newServer(t, hcloud.ServerCreateOpts{Name: "a", StartAfterCreate: hcloud.Ptr(false)})
	vol, _, err := c.Volume.Create(ctx(t), hcloud.VolumeCreateOpts{Name: "v", Size: 10, Location: &hcloud.Location{Name: "fsn1"}})
	if err != nil {
		t.Fatal(err)
	}
	e.wait(t, vol.Action)
	if _, _, err := c.Volume.Attach(ctx(t), vol.Volume, srv); err != nil {
		t.Fatal(err)
	}
	_, resp, err := c.Server.Poweron(ctx(t), srv)
	apiErr(t, err, resp, hcloud.ErrorCodeLocked, http.StatusLocked)
	_, resp, err = c.Volume.Detach(ctx(t), vol.Volume)
	apiErr(t, err, resp, hcloud.ErrorCodeLocked, http.StatusLocked)
	// Other servers stay free.
	other := e.newServer(t, hcloud.ServerCreateOpts{Name: "b", StartAfterCreate: hcloud.Ptr(false)})
	if _, _, err := c.Server.Poweron(ctx(t), other); err != nil {
		t.Fatalf("poweron of an unrelated server: %v", err)
	}
}
