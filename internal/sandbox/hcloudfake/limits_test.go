package hcloudfake_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/hetznercloud/hcloud-go/v2/hcloud"
)

func TestProjectLimits(t *testing.T) {
	e, c := newPlainEnv(t)
	e.fake.SetLimit("servers", 1)
	e.newServer(t, hcloud.ServerCreateOpts{Name: "a"})
	_, resp, err := c.Server.Create(ctx(t), hcloud.ServerCreateOpts{Name: "b", ServerType: &hcloud.ServerType{Name: "cx23"},
		Image: &hcloud.Image{Name: "debian-12"}, Location: &hcloud.Location{Name: "fsn1"}})
	herr := apiErr(t, err, resp, hcloud.ErrorCodeResourceLimitExceeded, http.StatusForbidden)
	if !strings.Contains(herr.Message, "1 of 1 servers") {
		t.Errorf("message %q does not say which limit", herr.Message)
	}
	e.fake.SetLimit("servers", 0)

	e.fake.SetLimit("primary_ips", 3) // server a holds two already
	_, resp, err = c.Server.Create(ctx(t), hcloud.ServerCreateOpts{Name: "b", ServerType: &hcloud.ServerType{Name: "cx23"},
		Image: &hcloud.Image{Name: "debian-12"}, Location: &hcloud.Location{Name: "fsn1"}})
	apiErr(t, err, resp, hcloud.ErrorCodeResourceLimitExceeded, http.StatusForbidden)
	e.newServer(t, hcloud.ServerCreateOpts{Name: "b", PublicNet: &hcloud.ServerCreatePublicNet{EnableIPv4: false, EnableIPv6: true}})

	e.fake.SetLimit("placement_groups", 1)
	if _, _, err := c.PlacementGroup.Create(ctx(t), hcloud.PlacementGroupCreateOpts{Name: "p1", Type: hcloud.PlacementGroupTypeSpread}); err != nil {
		t.Fatal(err)
	}
	_, resp, err = c.PlacementGroup.Create(ctx(t), hcloud.PlacementGroupCreateOpts{Name: "p2", Type: hcloud.PlacementGroupTypeSpread})
	apiErr(t, err, resp, hcloud.ErrorCodeResourceLimitExceeded, http.StatusForbidden)
}
