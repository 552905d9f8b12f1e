package hcloudfake_test

import (
	"net"
	"strconv"
	"sync"
	"testing"

	"github.com/hetznercloud/hcloud-go/v2/hcloud"
)

func TestPaginationOverFiftyItems(t *testing.T) {
	e, c := newPlainEnv(t)
	for i := range 60 {
		labels := map[string]string{"batch": "x"}
		if i%2 == 0 {
			labels["even"] = "true"
		}
		if _, _, err := c.PlacementGroup.Create(ctx(t), hcloud.PlacementGroupCreateOpts{
			Name: "pg-" + strconv.Itoa(i), Type: hcloud.PlacementGroupTypeSpread, Labels: labels}); err != nil {
			t.Fatal(err)
		}
	}
	all, err := e.e2eAll(t, "batch=x")
	if err != nil || len(all) != 60 {
		t.Fatalf("AllWithOpts = %d, %v; want 60", len(all), err)
	}
	for i := 1; i < len(all); i++ {
		if all[i-1].ID >= all[i].ID {
			t.Fatalf("pages overlap or are unordered at %d", i)
		}
	}
	if got := e.fake.Stats().ByRoute["GET /placement_groups"]; got != 2 {
		t.Errorf("GET /placement_groups = %d, want 2 pages of 50", got)
	}
	even, err := e.e2eAll(t, "batch=x,even")
	if err != nil || len(even) != 30 {
		t.Errorf("even = %d, %v; want 30", len(even), err)
	}
	page, resp, err := c.PlacementGroup.List(ctx(t), hcloud.PlacementGroupListOpts{ListOpts: hcloud.ListOpts{Page: 3, PerPage: 25}})
	if err != nil || len(page) != 10 || resp.Meta.Pagination.LastPage != 3 || resp.Meta.Pagination.TotalEntries != 60 || resp.Meta.Pagination.NextPage != 0 {
		t.Errorf("page 3 = %d items, meta %+v, %v", len(page), resp.Meta.Pagination, err)
	}
	byName, _, err := c.PlacementGroup.GetByName(ctx(t), "pg-42")
	if err != nil || byName == nil || byName.Name != "pg-42" {
		t.Errorf("GetByName = %+v, %v", byName, err)
	}
	desc, _, err := c.PlacementGroup.List(ctx(t), hcloud.PlacementGroupListOpts{Sort: []string{"name:desc"}})
	if err != nil || desc[0].Name != "pg-9" {
		t.Errorf("sort name:desc first = %v, %v; want pg-9", desc[0].Name, err)
	}
}

func (e *env) e2eAll(t *testing.T, selector string) ([]*hcloud.PlacementGroup, error) {
	return e.client.PlacementGroup.AllWithOpts(ctx(t), hcloud.PlacementGroupListOpts{ListOpts: hcloud.ListOpts{LabelSelector: selector}})
}

func TestConcurrentRequests(t *testing.T) {
	e, c := newPlainEnv(t)
	var wg sync.WaitGroup
	errs := make(chan error, 40)
	for i := range 20 {
		wg.Go(func() {
			res, _, err := c.Server.Create(ctx(t), hcloud.ServerCreateOpts{Name: "c-" + strconv.Itoa(i),
				ServerType: &hcloud.ServerType{Name: "cx23"}, Image: &hcloud.Image{Name: "debian-12"}, Location: &hcloud.Location{Name: "fsn1"}})
			if err != nil {
				errs <- err
				return
			}
			errs <- c.Action.WaitFor(ctx(t), res.Action)
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
	ips := map[string]bool{}
	for _, s := range e.fake.Servers() {
		if ips[s.PublicIPv4] {
			t.Errorf("duplicate public IP %s", s.PublicIPv4)
		}
		ips[s.PublicIPv4] = true
	}
	if len(ips) != 20 {
		t.Errorf("%d servers, want 20", len(ips))
	}
}

func TestAliasIPsAndNetworkAttach(t *testing.T) {
	e, c, network := newNetworkEnv(t, "10.0.1.0/24")
	var servers []*hcloud.Server
	for _, name := range []string{"cp-1", "cp-2"} {
		servers = append(servers, e.newServer(t, hcloud.ServerCreateOpts{Name: name, ServerType: &hcloud.ServerType{Name: "cpx22"},
			Location: &hcloud.Location{Name: "nbg1"}}))
	}
	a, _, err := c.Server.AttachToNetwork(ctx(t), servers[0], hcloud.ServerAttachToNetworkOpts{Network: network,
		IP: net.ParseIP("10.0.1.10"), AliasIPs: []net.IP{net.ParseIP("10.0.1.100")}})
	if err != nil {
		t.Fatal(err)
	}
	e.wait(t, a)
	if _, _, err := c.Server.AttachToNetwork(ctx(t), servers[1], hcloud.ServerAttachToNetworkOpts{Network: network,
		IP: net.ParseIP("10.0.1.100")}); !hcloud.IsError(err, hcloud.ErrorCodeIPNotAvailable) {
		t.Errorf("attach on a used alias IP: %v, want ip_not_available", err)
	}
	if _, _, err := c.Server.AttachToNetwork(ctx(t), servers[1], hcloud.ServerAttachToNetworkOpts{Network: network}); err != nil {
		t.Fatal(err)
	}
	// Moving the VIP: drop it on cp-1, claim it on cp-2.
	if _, _, err := c.Server.ChangeAliasIPs(ctx(t), servers[1], hcloud.ServerChangeAliasIPsOpts{Network: network,
		AliasIPs: []net.IP{net.ParseIP("10.0.1.100")}}); !hcloud.IsError(err, hcloud.ErrorCodeIPNotAvailable) {
		t.Errorf("claim a VIP still held: %v, want ip_not_available", err)
	}
	if _, _, err := c.Server.ChangeAliasIPs(ctx(t), servers[0], hcloud.ServerChangeAliasIPsOpts{Network: network, AliasIPs: []net.IP{}}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := c.Server.ChangeAliasIPs(ctx(t), servers[1], hcloud.ServerChangeAliasIPsOpts{Network: network,
		AliasIPs: []net.IP{net.ParseIP("10.0.1.100")}}); err != nil {
		t.Fatalf("claim the free VIP: %v", err)
	}
	s, _, _ := c.Server.GetByID(ctx(t), servers[1].ID)
	if len(s.PrivateNet) != 1 || len(s.PrivateNet[0].Aliases) != 1 || !s.PrivateNet[0].Aliases[0].Equal(net.ParseIP("10.0.1.100")) {
		t.Errorf("cp-2 private net = %+v, want alias 10.0.1.100", s.PrivateNet)
	}
	d, _, err := c.Server.DetachFromNetwork(ctx(t), servers[1], hcloud.ServerDetachFromNetworkOpts{Network: network})
	if err != nil {
		t.Fatal(err)
	}
	e.wait(t, d)
	if got := e.fake.Servers(); len(got[1].PrivateIPs) != 0 {
		t.Errorf("after detach: %+v", got[1])
	}
}
