package hcloudfake_test

import (
	"errors"
	"fmt"
	"net/http"
	"testing"

	"github.com/hetznercloud/hcloud-go/v2/hcloud"
)

// apiErr asserts err is a Hetzner API error with this code and HTTP status,
// and returns it.
func apiErr(t *testing.T, err error, resp *hcloud.Response, code hcloud.ErrorCode, status int) hcloud.Error {
	t.Helper()
	var herr hcloud.Error
	if !errors.As(err, &herr) || herr.Code != code {
		t.Fatalf("err = %v, want %s", err, code)
	}
	if resp == nil || resp.StatusCode != status {
		got := 0
		if resp != nil {
			got = resp.StatusCode
		}
		t.Fatalf("%s answered with HTTP %d, want %d", code, got, status)
	}
	return herr
}

// invalidField asserts err is invalid_input (400) naming field in its details.
func invalidField(t *testing.T, err error, resp *hcloud.Response, field string) {
	t.Helper()
	herr := apiErr(t, err, resp, hcloud.ErrorCodeInvalidInput, http.StatusBadRequest)
	d, ok := herr.Details.(hcloud.ErrorDetailsInvalidInput)
	if !ok || len(d.Fields) == 0 || d.Fields[0].Name != field || len(d.Fields[0].Messages) == 0 {
		t.Fatalf("details = %#v, want field %s with a message", herr.Details, field)
	}
}

func TestNetworkRangesFollowTheAPIDescription(t *testing.T) {
	_, c := newPlainEnv(t)
	for _, tc := range []struct{ name, ipRange, subnet string }{
		{"shared address space", "100.64.0.0/10", ""},
		{"public range", "8.8.0.0/16", ""},
		{"straddles 172.16/12", "172.0.0.0/8", ""},
		{"smaller than /24", "10.0.0.0/25", ""},
		{"subnet smaller than /30", "10.0.0.0/16", "10.0.1.0/31"},
		{"subnet outside the network", "10.0.0.0/16", "10.1.0.0/24"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			opts := hcloud.NetworkCreateOpts{Name: "n", IPRange: mustCIDR(t, tc.ipRange)}
			if tc.subnet != "" {
				opts.Subnets = []hcloud.NetworkSubnet{{Type: hcloud.NetworkSubnetTypeCloud, IPRange: mustCIDR(t, tc.subnet), NetworkZone: hcloud.NetworkZoneEUCentral}}
			}
			_, resp, err := c.Network.Create(ctx(t), opts)
			invalidField(t, err, resp, "ip_range")
		})
	}
	for i, ok := range []string{"10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/24", "172.31.0.0/16"} {
		if _, _, err := c.Network.Create(ctx(t), hcloud.NetworkCreateOpts{Name: fmt.Sprint("ok-", i), IPRange: mustCIDR(t, ok)}); err != nil {
			t.Fatalf("%s: %v", ok, err)
		}
	}
}

func TestLabelsFollowHetznersPattern(t *testing.T) {
	_, c := newPlainEnv(t)
	for _, labels := range []map[string]string{
		{"role": "-worker"},
		{"role": "a b"},
		{"role": "x/y"},
		{"bad key!": "x"},
		{"hetzner.cloud/owner": "me"},
		{"Example.COM/role": "x"},
		{"role": "a123456789012345678901234567890123456789012345678901234567890123"},
	} {
		_, resp, err := c.SSHKey.Create(ctx(t), hcloud.SSHKeyCreateOpts{Name: "k", PublicKey: mustKey(t), Labels: labels})
		invalidField(t, err, resp, "labels")
	}
	good := map[string]string{"ohmytalos.io/cluster": "demo", "role": "", "v": "1.2_3-a"}
	if _, _, err := c.SSHKey.Create(ctx(t), hcloud.SSHKeyCreateOpts{Name: "k", PublicKey: mustKey(t), Labels: good}); err != nil {
		t.Fatal(err)
	}
	for sel, want := range map[string]int{
		"role": 1, "!role": 0, "v in (1.2_3-a, x)": 1, "v notin (1.2_3-a)": 0, "v!=x": 1,
		"ohmytalos.io/cluster==demo,role": 1, "ohmytalos.io/cluster=other": 0,
	} {
		keys, err := c.SSHKey.AllWithOpts(ctx(t), hcloud.SSHKeyListOpts{ListOpts: hcloud.ListOpts{LabelSelector: sel}})
		if err != nil || len(keys) != want {
			t.Errorf("selector %q: %d keys, err %v; want %d", sel, len(keys), err, want)
		}
	}
	for _, bad := range []string{"role in a,b", "a b c", "role=,", "bad key!=x"} {
		_, resp, err := c.SSHKey.List(ctx(t), hcloud.SSHKeyListOpts{ListOpts: hcloud.ListOpts{LabelSelector: bad}})
		invalidField(t, err, resp, "label_selector")
	}
}

func TestListingActionsRequiresID(t *testing.T) {
	e, c := newPlainEnv(t)
	srv := e.newServer(t, hcloud.ServerCreateOpts{Name: "a"})
	_, resp, err := c.Action.List(ctx(t), hcloud.ActionListOpts{})
	invalidField(t, err, resp, "id")
	acts, err := c.Server.Action.All(ctx(t), hcloud.ActionListOpts{})
	if err != nil || len(acts) == 0 {
		t.Fatalf("GET /servers/actions: %d actions, %v", len(acts), err)
	}
	one, err := c.Action.AllWithOpts(ctx(t), hcloud.ActionListOpts{ID: []int64{acts[0].ID}})
	if err != nil || len(one) != 1 {
		t.Fatalf("GET /actions?id=: %d actions, %v", len(one), err)
	}
	_ = srv
}

func TestConflictsAre422(t *testing.T) {
	e, c, network := newNetworkEnv(t, "10.0.1.0/24")
	srv := e.newServer(t, hcloud.ServerCreateOpts{Name: "a", Networks: []*hcloud.Network{network}})
	_, resp, err := c.Server.AttachToNetwork(ctx(t), srv, hcloud.ServerAttachToNetworkOpts{Network: network})
	apiErr(t, err, resp, hcloud.ErrorCodeServerAlreadyAttached, http.StatusUnprocessableEntity)

	fw, _, err := c.Firewall.Create(ctx(t), hcloud.FirewallCreateOpts{Name: "fw",
		ApplyTo: []hcloud.FirewallResource{{Type: hcloud.FirewallResourceTypeServer, Server: &hcloud.FirewallResourceServer{ID: srv.ID}}}})
	if err != nil {
		t.Fatal(err)
	}
	_, resp, err = c.Firewall.ApplyResources(ctx(t), fw.Firewall,
		[]hcloud.FirewallResource{{Type: hcloud.FirewallResourceTypeServer, Server: &hcloud.FirewallResourceServer{ID: srv.ID}}})
	apiErr(t, err, resp, hcloud.ErrorCodeFirewallAlreadyApplied, http.StatusUnprocessableEntity)
	resp, err = c.Firewall.Delete(ctx(t), fw.Firewall)
	apiErr(t, err, resp, hcloud.ErrorCodeResourceInUse, http.StatusUnprocessableEntity)

	_, resp, err = c.SSHKey.Create(ctx(t), hcloud.SSHKeyCreateOpts{Name: "k", PublicKey: mustKey(t)})
	if err != nil {
		t.Fatal(err)
	}
	_, resp, err = c.SSHKey.Create(ctx(t), hcloud.SSHKeyCreateOpts{Name: "k", PublicKey: mustKey(t)})
	apiErr(t, err, resp, hcloud.ErrorCodeUniquenessError, http.StatusConflict)
}

func mustKey(t *testing.T) string {
	t.Helper()
	k, _ := newPublicKey(t)
	return k
}

func TestVolumesStayInTheirLocation(t *testing.T) {
	e, c := newPlainEnv(t)
	vol, _, err := c.Volume.Create(ctx(t), hcloud.VolumeCreateOpts{Name: "v", Size: 10, Location: &hcloud.Location{Name: "nbg1"}})
	if err != nil {
		t.Fatal(err)
	}
	e.wait(t, vol.Action)
	_, resp, err := c.Server.Create(ctx(t), hcloud.ServerCreateOpts{Name: "a", ServerType: &hcloud.ServerType{Name: "cx23"},
		Image: &hcloud.Image{Name: "debian-12"}, Location: &hcloud.Location{Name: "fsn1"}, Volumes: []*hcloud.Volume{vol.Volume}})
	invalidField(t, err, resp, "volumes")
	srv := e.newServer(t, hcloud.ServerCreateOpts{Name: "b"})
	_, resp, err = c.Volume.Attach(ctx(t), vol.Volume, srv)
	invalidField(t, err, resp, "server")
	near := e.newServer(t, hcloud.ServerCreateOpts{Name: "c", Location: &hcloud.Location{Name: "nbg1"}, Volumes: []*hcloud.Volume{vol.Volume}})
	got, _, err := c.Volume.GetByID(ctx(t), vol.Volume.ID)
	if err != nil || got.Server == nil || got.Server.ID != near.ID {
		t.Fatalf("volume after create in its location: %+v, %v", got, err)
	}
}
