package hcloudfake_test

import (
	"net"
	"testing"
	"time"

	"github.com/hetznercloud/hcloud-go/v2/hcloud"
)

// TestEveryKindFollowsTheAPIDescription drives every kind of resource the
// fake serves through hcloud-go (create, read, list, update, actions,
// errors, delete) and checks each exchange against Hetzner's API
// description, when the file is there.
func TestEveryKindFollowsTheAPIDescription(t *testing.T) {
	e, rec := newRecordedEnv(t)
	c := e.client
	ok := func(what string, err error) {
		t.Helper()
		if err != nil {
			t.Errorf("%s: %v", what, err)
		}
	}
	// Catalog.
	_, err := c.ServerType.All(ctx(t))
	ok("server types", err)
	_, err = c.Location.All(ctx(t))
	ok("locations", err)
	_, err = c.LoadBalancerType.All(ctx(t))
	ok("load balancer types", err)
	_, _, err = c.Pricing.Get(ctx(t))
	ok("pricing", err)
	_, err = c.Image.AllWithOpts(ctx(t), hcloud.ImageListOpts{Type: []hcloud.ImageType{hcloud.ImageTypeSystem}})
	ok("images", err)

	key, _ := newPublicKey(t)
	sk, _, err := c.SSHKey.Create(ctx(t), hcloud.SSHKeyCreateOpts{Name: "k", PublicKey: key, Labels: map[string]string{"a": "b"}})
	ok("ssh key", err)
	_, _, err = c.SSHKey.Update(ctx(t), sk, hcloud.SSHKeyUpdateOpts{Labels: map[string]string{"a": "c"}})
	ok("ssh key update", err)
	_, err = c.SSHKey.All(ctx(t))
	ok("ssh keys", err)

	nw := sweepNetwork(t, e)
	pg, _, err := c.PlacementGroup.Create(ctx(t), hcloud.PlacementGroupCreateOpts{Name: "pg", Type: hcloud.PlacementGroupTypeSpread})
	ok("placement group", err)
	fw, _, err := c.Firewall.Create(ctx(t), hcloud.FirewallCreateOpts{Name: "fw", Rules: []hcloud.FirewallRule{{
		Direction: hcloud.FirewallRuleDirectionIn, Protocol: hcloud.FirewallRuleProtocolTCP, Port: hcloud.Ptr("50000"),
		SourceIPs: []net.IPNet{*mustCIDR(t, "0.0.0.0/0")}}}})
	ok("firewall", err)

	s := e.newServer(t, hcloud.ServerCreateOpts{Name: "s", SSHKeys: []*hcloud.SSHKey{sk}, Labels: map[string]string{"pool": "w"},
		Networks: []*hcloud.Network{nw}, PlacementGroup: pg.PlacementGroup, Firewalls: []*hcloud.ServerCreateFirewall{{Firewall: *fw.Firewall}}})
	sweepServer(t, e, s, nw, pg.PlacementGroup)
	sweepFirewall(t, e, fw.Firewall, s)
	sweepVolume(t, e, s)
	sweepLoadBalancer(t, e, s, nw)

	// Errors: a missing server, a duplicate name.
	if _, _, err := c.Server.GetByID(ctx(t), 999999); err != nil {
		t.Errorf("missing server: %v", err)
	}
	if _, _, err := c.SSHKey.Create(ctx(t), hcloud.SSHKeyCreateOpts{Name: "k", PublicKey: key}); err == nil {
		t.Error("duplicate ssh key accepted")
	}

	res, _, err := c.Server.DeleteWithResult(ctx(t), s)
	ok("delete server", err)
	if err == nil {
		e.wait(t, res.Action)
	}
	_, err = c.PlacementGroup.Delete(ctx(t), pg.PlacementGroup)
	ok("delete placement group", err)
	_, err = c.Firewall.Delete(ctx(t), fw.Firewall)
	ok("delete firewall", err)
	_, err = c.Network.Delete(ctx(t), nw)
	ok("delete network", err)
	_, err = c.SSHKey.Delete(ctx(t), sk)
	ok("delete ssh key", err)
	checkAgainstDescription(t, rec)
}

func sweepNetwork(t *testing.T, e *env) *hcloud.Network {
	t.Helper()
	c := e.client
	nw, _, err := c.Network.Create(ctx(t), hcloud.NetworkCreateOpts{Name: "n", IPRange: mustCIDR(t, "10.0.0.0/16"),
		Subnets: []hcloud.NetworkSubnet{{Type: hcloud.NetworkSubnetTypeCloud, IPRange: mustCIDR(t, "10.0.1.0/24"), NetworkZone: hcloud.NetworkZoneEUCentral}}})
	if err != nil {
		t.Fatalf("network: %v", err)
	}
	sub := hcloud.NetworkSubnet{Type: hcloud.NetworkSubnetTypeCloud, IPRange: mustCIDR(t, "10.0.2.0/24"), NetworkZone: hcloud.NetworkZoneEUCentral}
	route := hcloud.NetworkRoute{Destination: mustCIDR(t, "10.42.0.0/24"), Gateway: net.ParseIP("10.0.1.2")}
	for what, call := range map[string]func() (*hcloud.Action, *hcloud.Response, error){
		"add subnet": func() (*hcloud.Action, *hcloud.Response, error) {
			return c.Network.AddSubnet(ctx(t), nw, hcloud.NetworkAddSubnetOpts{Subnet: sub})
		},
		"add route": func() (*hcloud.Action, *hcloud.Response, error) {
			return c.Network.AddRoute(ctx(t), nw, hcloud.NetworkAddRouteOpts{Route: route})
		},
	} {
		a, _, err := call()
		if err != nil {
			t.Errorf("%s: %v", what, err)
			continue
		}
		e.wait(t, a)
	}
	if a, _, err := c.Network.DeleteRoute(ctx(t), nw, hcloud.NetworkDeleteRouteOpts{Route: route}); err != nil {
		t.Errorf("delete route: %v", err)
	} else {
		e.wait(t, a)
	}
	if a, _, err := c.Network.DeleteSubnet(ctx(t), nw, hcloud.NetworkDeleteSubnetOpts{Subnet: sub}); err != nil {
		t.Errorf("delete subnet: %v", err)
	} else {
		e.wait(t, a)
	}
	if _, _, err := c.Network.Update(ctx(t), nw, hcloud.NetworkUpdateOpts{Labels: map[string]string{"a": "b"}}); err != nil {
		t.Errorf("update network: %v", err)
	}
	got, _, err := c.Network.GetByID(ctx(t), nw.ID)
	if err != nil || got == nil {
		t.Fatalf("get network: %v", err)
	}
	return got
}

// step is one action-returning call of a sweep.
type step struct {
	what string
	call func() (*hcloud.Action, *hcloud.Response, error)
}

// runSteps runs steps in order, waiting for each action.
func runSteps(t *testing.T, e *env, steps []step) {
	t.Helper()
	for _, st := range steps {
		a, _, err := st.call()
		if err != nil {
			t.Errorf("%s: %v", st.what, err)
			continue
		}
		e.wait(t, a)
	}
}

func sweepServer(t *testing.T, e *env, s *hcloud.Server, nw *hcloud.Network, pg *hcloud.PlacementGroup) {
	t.Helper()
	c := e.client
	runSteps(t, e, []step{
		{"poweroff", func() (*hcloud.Action, *hcloud.Response, error) { return c.Server.Poweroff(ctx(t), s) }},
		{"remove from placement group", func() (*hcloud.Action, *hcloud.Response, error) { return c.Server.RemoveFromPlacementGroup(ctx(t), s) }},
		{"add to placement group", func() (*hcloud.Action, *hcloud.Response, error) { return c.Server.AddToPlacementGroup(ctx(t), s, pg) }},
		{"alias ips", func() (*hcloud.Action, *hcloud.Response, error) {
			return c.Server.ChangeAliasIPs(ctx(t), s, hcloud.ServerChangeAliasIPsOpts{Network: nw, AliasIPs: []net.IP{net.ParseIP("10.0.1.100")}})
		}},
	})
	rescue, _, err := c.Server.EnableRescue(ctx(t), s, hcloud.ServerEnableRescueOpts{Type: hcloud.ServerRescueTypeLinux64})
	if err != nil {
		t.Errorf("enable rescue: %v", err)
	} else {
		e.wait(t, rescue.Action)
	}
	img, _, err := c.Server.CreateImage(ctx(t), s, &hcloud.ServerCreateImageOpts{Type: hcloud.ImageTypeSnapshot,
		Description: hcloud.Ptr("talos"), Labels: map[string]string{"os": "talos"}})
	if err != nil {
		t.Errorf("create image: %v", err)
	} else {
		e.wait(t, img.Action)
		if _, _, err := c.Image.Update(ctx(t), img.Image, hcloud.ImageUpdateOpts{Labels: map[string]string{"os": "talos", "v": "1"}}); err != nil {
			t.Errorf("update image: %v", err)
		}
		if _, err := c.Image.AllWithOpts(ctx(t), hcloud.ImageListOpts{ListOpts: hcloud.ListOpts{LabelSelector: "os=talos"}}); err != nil {
			t.Errorf("list images: %v", err)
		}
		if _, err := c.Image.Delete(ctx(t), img.Image); err != nil {
			t.Errorf("delete image: %v", err)
		}
	}
	runSteps(t, e, []step{
		{"disable rescue", func() (*hcloud.Action, *hcloud.Response, error) { return c.Server.DisableRescue(ctx(t), s) }},
		{"detach from network", func() (*hcloud.Action, *hcloud.Response, error) {
			return c.Server.DetachFromNetwork(ctx(t), s, hcloud.ServerDetachFromNetworkOpts{Network: nw})
		}},
		{"attach to network", func() (*hcloud.Action, *hcloud.Response, error) {
			return c.Server.AttachToNetwork(ctx(t), s, hcloud.ServerAttachToNetworkOpts{Network: nw, IP: net.ParseIP("10.0.1.5")})
		}},
		{"poweron", func() (*hcloud.Action, *hcloud.Response, error) { return c.Server.Poweron(ctx(t), s) }},
		{"reboot", func() (*hcloud.Action, *hcloud.Response, error) { return c.Server.Reboot(ctx(t), s) }},
		{"reset", func() (*hcloud.Action, *hcloud.Response, error) { return c.Server.Reset(ctx(t), s) }},
	})
	if _, _, err := c.Server.Update(ctx(t), s, hcloud.ServerUpdateOpts{Labels: map[string]string{"pool": "w", "x": "y"}}); err != nil {
		t.Errorf("update server: %v", err)
	}
	if _, err := c.Server.AllWithOpts(ctx(t), hcloud.ServerListOpts{ListOpts: hcloud.ListOpts{LabelSelector: "pool=w"}}); err != nil {
		t.Errorf("list servers: %v", err)
	}
	if _, err := c.PrimaryIP.All(ctx(t)); err != nil {
		t.Errorf("list primary ips: %v", err)
	}
}

func sweepFirewall(t *testing.T, e *env, fw *hcloud.Firewall, s *hcloud.Server) {
	t.Helper()
	c := e.client
	as, _, err := c.Firewall.SetRules(ctx(t), fw, hcloud.FirewallSetRulesOpts{Rules: []hcloud.FirewallRule{{
		Direction: hcloud.FirewallRuleDirectionIn, Protocol: hcloud.FirewallRuleProtocolICMP, SourceIPs: []net.IPNet{*mustCIDR(t, "0.0.0.0/0")}}}})
	if err != nil {
		t.Errorf("set rules: %v", err)
	} else {
		e.wait(t, as...)
	}
	sel := hcloud.FirewallResource{Type: hcloud.FirewallResourceTypeLabelSelector, LabelSelector: &hcloud.FirewallResourceLabelSelector{Selector: "pool=w"}}
	if as, _, err := c.Firewall.ApplyResources(ctx(t), fw, []hcloud.FirewallResource{sel}); err != nil {
		t.Errorf("apply to resources: %v", err)
	} else {
		e.wait(t, as...)
	}
	if _, _, err := c.Firewall.GetByID(ctx(t), fw.ID); err != nil {
		t.Errorf("get firewall: %v", err)
	}
	srv := hcloud.FirewallResource{Type: hcloud.FirewallResourceTypeServer, Server: &hcloud.FirewallResourceServer{ID: s.ID}}
	if as, _, err := c.Firewall.RemoveResources(ctx(t), fw, []hcloud.FirewallResource{sel, srv}); err != nil {
		t.Errorf("remove from resources: %v", err)
	} else {
		e.wait(t, as...)
	}
}

func sweepVolume(t *testing.T, e *env, s *hcloud.Server) {
	t.Helper()
	c := e.client
	v, _, err := c.Volume.Create(ctx(t), hcloud.VolumeCreateOpts{Name: "v", Size: 10, Location: &hcloud.Location{Name: s.Location.Name}, Labels: map[string]string{"a": "b"}})
	if err != nil {
		t.Errorf("create volume: %v", err)
		return
	}
	e.wait(t, v.Action)
	if a, _, err := c.Volume.Attach(ctx(t), v.Volume, s); err != nil {
		t.Errorf("attach volume: %v", err)
	} else {
		e.wait(t, a)
	}
	if _, err := c.Volume.All(ctx(t)); err != nil {
		t.Errorf("list volumes: %v", err)
	}
	if a, _, err := c.Volume.Detach(ctx(t), v.Volume); err != nil {
		t.Errorf("detach volume: %v", err)
	} else {
		e.wait(t, a)
	}
	if _, err := c.Volume.Delete(ctx(t), v.Volume); err != nil {
		t.Errorf("delete volume: %v", err)
	}
}

func sweepLoadBalancer(t *testing.T, e *env, s *hcloud.Server, nw *hcloud.Network) {
	t.Helper()
	c := e.client
	res, _, err := c.LoadBalancer.Create(ctx(t), hcloud.LoadBalancerCreateOpts{Name: "lb", LoadBalancerType: &hcloud.LoadBalancerType{Name: "lb11"},
		Location: &hcloud.Location{Name: s.Location.Name}, Network: nw, Labels: map[string]string{"a": "b"},
		Targets: []hcloud.LoadBalancerCreateOptsTarget{{Type: hcloud.LoadBalancerTargetTypeLabelSelector, LabelSelector: hcloud.LoadBalancerCreateOptsTargetLabelSelector{Selector: "pool=w"}, UsePrivateIP: hcloud.Ptr(true)}},
		Services: []hcloud.LoadBalancerCreateOptsService{{Protocol: hcloud.LoadBalancerServiceProtocolTCP, ListenPort: hcloud.Ptr(443), DestinationPort: hcloud.Ptr(443),
			Proxyprotocol: hcloud.Ptr(false), HealthCheck: &hcloud.LoadBalancerCreateOptsServiceHealthCheck{Protocol: hcloud.LoadBalancerServiceProtocolTCP,
				Port: hcloud.Ptr(443), Interval: hcloud.Ptr(15 * time.Second), Timeout: hcloud.Ptr(10 * time.Second), Retries: hcloud.Ptr(3)}}}})
	if err != nil {
		t.Errorf("create load balancer: %v", err)
		return
	}
	e.wait(t, res.Action)
	lb := res.LoadBalancer
	runSteps(t, e, []step{
		{"add service", func() (*hcloud.Action, *hcloud.Response, error) {
			return c.LoadBalancer.AddService(ctx(t), lb, hcloud.LoadBalancerAddServiceOpts{Protocol: hcloud.LoadBalancerServiceProtocolTCP,
				ListenPort: hcloud.Ptr(80), DestinationPort: hcloud.Ptr(80), Proxyprotocol: hcloud.Ptr(false), HealthCheck: tcpCheck(80)})
		}},
		{"update service", func() (*hcloud.Action, *hcloud.Response, error) {
			return c.LoadBalancer.UpdateService(ctx(t), lb, 80, hcloud.LoadBalancerUpdateServiceOpts{DestinationPort: hcloud.Ptr(8080)})
		}},
		{"server target", func() (*hcloud.Action, *hcloud.Response, error) {
			return c.LoadBalancer.AddServerTarget(ctx(t), lb, hcloud.LoadBalancerAddServerTargetOpts{Server: s, UsePrivateIP: hcloud.Ptr(true)})
		}},
		{"ip target", func() (*hcloud.Action, *hcloud.Response, error) {
			return c.LoadBalancer.AddIPTarget(ctx(t), lb, hcloud.LoadBalancerAddIPTargetOpts{IP: net.ParseIP("203.0.113.9")})
		}},
		{"change algorithm", func() (*hcloud.Action, *hcloud.Response, error) {
			return c.LoadBalancer.ChangeAlgorithm(ctx(t), lb, hcloud.LoadBalancerChangeAlgorithmOpts{Type: hcloud.LoadBalancerAlgorithmTypeLeastConnections})
		}},
		{"change type", func() (*hcloud.Action, *hcloud.Response, error) {
			return c.LoadBalancer.ChangeType(ctx(t), lb, hcloud.LoadBalancerChangeTypeOpts{LoadBalancerType: &hcloud.LoadBalancerType{Name: "lb21"}})
		}},
		{"remove server target", func() (*hcloud.Action, *hcloud.Response, error) {
			return c.LoadBalancer.RemoveServerTarget(ctx(t), lb, s)
		}},
		{"delete service", func() (*hcloud.Action, *hcloud.Response, error) {
			return c.LoadBalancer.DeleteService(ctx(t), lb, 80)
		}},
	})
	if _, err := c.LoadBalancer.All(ctx(t)); err != nil {
		t.Errorf("list load balancers: %v", err)
	}
	if _, _, err := c.LoadBalancer.Update(ctx(t), lb, hcloud.LoadBalancerUpdateOpts{Labels: map[string]string{"a": "c"}}); err != nil {
		t.Errorf("update load balancer: %v", err)
	}
	if a, _, err := c.LoadBalancer.DetachFromNetwork(ctx(t), lb, hcloud.LoadBalancerDetachFromNetworkOpts{Network: nw}); err != nil {
		t.Errorf("detach load balancer: %v", err)
	} else {
		e.wait(t, a)
	}
	del, _, err := c.LoadBalancer.DeleteWithResult(ctx(t), lb)
	if err != nil {
		t.Errorf("delete load balancer: %v", err)
		return
	}
	e.wait(t, del.Action)
}
