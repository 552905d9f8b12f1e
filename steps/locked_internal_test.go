package steps

import (
	"context"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/hetznercloud/hcloud-go/v2/hcloud"

	"github.com/ohmytalos/ohmytalos/internal/clients"
	"github.com/ohmytalos/ohmytalos/internal/sandbox/hcloudfake"
)

// The fake Hetzner API answers 423 locked while the server's create action
// runs (hcloud-go does not retry it); whileLocked retries until the action
// is done and the power-on goes through.
func TestWhileLockedRetriesLockedServers(t *testing.T) {
	f := hcloudfake.New(hcloudfake.Options{Token: "t", Durations: map[string]time.Duration{"create_server": 300 * time.Millisecond}})
	srv := httptest.NewServer(f)
	defer srv.Close()
	c := hcloud.NewClient(hcloud.WithEndpoint(srv.URL), hcloud.WithToken("t"))
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	res, _, err := c.Server.Create(ctx, hcloud.ServerCreateOpts{Name: "n", ServerType: &hcloud.ServerType{Name: "cx23"},
		Image: &hcloud.Image{Name: "debian-12"}, Location: &hcloud.Location{Name: "fsn1"}, StartAfterCreate: hcloud.Ptr(false)})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := c.Server.Poweron(ctx, res.Server); !hcloud.IsError(err, hcloud.ErrorCodeLocked) {
		t.Fatalf("poweron during create: %v, want locked", err)
	}
	d := &Deps{Set: &clients.Set{PollInterval: 20 * time.Millisecond}}
	tries := 0
	err = d.whileLocked(ctx, func() error {
		tries++
		_, _, err := c.Server.Poweron(ctx, res.Server)
		return err
	})
	if err != nil || tries < 2 {
		t.Fatalf("whileLocked: %v after %d tries, want success after retrying", err, tries)
	}
}
