package hcloudfake_test

import (
	"net"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hetznercloud/hcloud-go/v2/hcloud"
	"golang.org/x/crypto/ssh"

	"github.com/ohmytalos/ohmytalos/internal/sandbox/hcloudfake"
)

func mustCIDR(t *testing.T, s string) *net.IPNet {
	t.Helper()
	_, n, err := net.ParseCIDR(s)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// TestClusterTopology builds what ohmytalos builds (network, placement
// group, firewall by label selector, servers, a load balancer with a
// label-selector target over the private network) with the real client.
func TestClusterTopology(t *testing.T) {
	rec := &recorder{}
	e := newEnv(t, hcloudfake.Options{Hooks: rec})
	c := e.client

	network, _, err := c.Network.Create(ctx(t), hcloud.NetworkCreateOpts{
		Name: "demo", IPRange: mustCIDR(t, "10.0.0.0/16"), Labels: map[string]string{"cluster": "demo"},
		Subnets: []hcloud.NetworkSubnet{{Type: hcloud.NetworkSubnetTypeCloud, IPRange: mustCIDR(t, "10.0.1.0/24"), NetworkZone: hcloud.NetworkZoneEUCentral}},
	})
	if err != nil {
		t.Fatalf("create network: %v", err)
	}
	a, _, err := c.Network.AddSubnet(ctx(t), network, hcloud.NetworkAddSubnetOpts{Subnet: hcloud.NetworkSubnet{
		Type: hcloud.NetworkSubnetTypeCloud, IPRange: mustCIDR(t, "10.0.2.0/24"), NetworkZone: hcloud.NetworkZoneEUCentral}})
	if err != nil {
		t.Fatalf("add subnet: %v", err)
	}
	e.wait(t, a)
	a, _, err = c.Network.AddRoute(ctx(t), network, hcloud.NetworkAddRouteOpts{Route: hcloud.NetworkRoute{
		Destination: mustCIDR(t, "10.100.0.0/16"), Gateway: net.ParseIP("10.0.1.10")}})
	if err != nil {
		t.Fatalf("add route: %v", err)
	}
	e.wait(t, a)

	pg, _, err := c.PlacementGroup.Create(ctx(t), hcloud.PlacementGroupCreateOpts{Name: "demo-cp", Type: hcloud.PlacementGroupTypeSpread})
	if err != nil {
		t.Fatalf("create placement group: %v", err)
	}
	fwRes, _, err := c.Firewall.Create(ctx(t), hcloud.FirewallCreateOpts{
		Name: "demo",
		Rules: []hcloud.FirewallRule{{Direction: hcloud.FirewallRuleDirectionIn, Protocol: hcloud.FirewallRuleProtocolTCP,
			Port: hcloud.Ptr("6443"), SourceIPs: []net.IPNet{*mustCIDR(t, "0.0.0.0/0")}}},
		ApplyTo: []hcloud.FirewallResource{{Type: hcloud.FirewallResourceTypeLabelSelector,
			LabelSelector: &hcloud.FirewallResourceLabelSelector{Selector: "cluster=demo"}}},
	})
	if err != nil {
		t.Fatalf("create firewall: %v", err)
	}
	e.wait(t, fwRes.Actions...)

	pubText, pub := newPublicKey(t)
	key, _, err := c.SSHKey.Create(ctx(t), hcloud.SSHKeyCreateOpts{Name: "operator", PublicKey: pubText})
	if err != nil {
		t.Fatalf("create ssh key: %v", err)
	}
	if want := ssh.FingerprintLegacyMD5(pub); key.Fingerprint != want {
		t.Errorf("fingerprint = %q, want %q", key.Fingerprint, want)
	}

	roles := map[string]string{"demo-cp-1": "cp", "demo-cp-2": "cp", "demo-w-1": "worker", "demo-w-2": "worker"}
	ids := map[string]int64{}
	for _, name := range []string{"demo-cp-1", "demo-cp-2", "demo-w-1", "demo-w-2"} {
		opts := hcloud.ServerCreateOpts{Name: name, ServerType: &hcloud.ServerType{Name: "cpx22"},
			Image: &hcloud.Image{Name: "debian-12"}, Location: &hcloud.Location{Name: "fsn1"},
			Networks: []*hcloud.Network{network}, SSHKeys: []*hcloud.SSHKey{key}, UserData: "#talos config for " + name,
			Labels: map[string]string{"cluster": "demo", "role": roles[name]}}
		if roles[name] == "cp" {
			opts.PlacementGroup = pg.PlacementGroup
		}
		res, _, err := c.Server.Create(ctx(t), opts)
		if err != nil {
			t.Fatalf("create server %s: %v", name, err)
		}
		if res.RootPassword != "" {
			t.Errorf("server with ssh keys got a root password")
		}
		if res.Server.Status != hcloud.ServerStatusInitializing {
			t.Errorf("new server status = %s, want initializing", res.Server.Status)
		}
		e.wait(t, append([]*hcloud.Action{res.Action}, res.NextActions...)...)
		ids[name] = res.Server.ID
	}

	lbRes, _, err := c.LoadBalancer.Create(ctx(t), hcloud.LoadBalancerCreateOpts{
		Name: "demo-ingress", LoadBalancerType: &hcloud.LoadBalancerType{Name: "lb11"}, Location: &hcloud.Location{Name: "fsn1"},
		Network: network,
		Services: []hcloud.LoadBalancerCreateOptsService{{Protocol: hcloud.LoadBalancerServiceProtocolTCP,
			ListenPort: hcloud.Ptr(443), DestinationPort: hcloud.Ptr(443), Proxyprotocol: hcloud.Ptr(false),
			HealthCheck: &hcloud.LoadBalancerCreateOptsServiceHealthCheck{Protocol: hcloud.LoadBalancerServiceProtocolTCP,
				Port: hcloud.Ptr(443), Interval: hcloud.Ptr(15 * time.Second), Timeout: hcloud.Ptr(10 * time.Second), Retries: hcloud.Ptr(3)}}},
		Targets: []hcloud.LoadBalancerCreateOptsTarget{{Type: hcloud.LoadBalancerTargetTypeLabelSelector,
			LabelSelector: hcloud.LoadBalancerCreateOptsTargetLabelSelector{Selector: "cluster=demo,role=worker"}, UsePrivateIP: hcloud.Ptr(true)}},
	})
	if err != nil {
		t.Fatalf("create load balancer: %v", err)
	}
	e.wait(t, lbRes.Action)

	// The label selector target resolves to exactly the workers, health
	// unknown until the first check has run.
	lb, _, err := c.LoadBalancer.GetByID(ctx(t), lbRes.LoadBalancer.ID)
	if err != nil || lb == nil {
		t.Fatalf("get load balancer: %v", err)
	}
	if len(lb.Targets) != 1 || lb.Targets[0].Type != hcloud.LoadBalancerTargetTypeLabelSelector {
		t.Fatalf("targets = %+v, want one label_selector target", lb.Targets)
	}
	var got []int64
	for _, tg := range lb.Targets[0].Targets {
		got = append(got, tg.Server.Server.ID)
		if !tg.UsePrivateIP || len(tg.HealthStatus) != 1 || tg.HealthStatus[0].Status != hcloud.LoadBalancerTargetHealthStatusStatusUnknown {
			t.Errorf("resolved target %+v: want use_private_ip and one unknown status", tg)
		}
	}
	if want := []int64{ids["demo-w-1"], ids["demo-w-2"]}; !slices.Equal(got, want) {
		t.Errorf("resolved targets = %v, want workers %v", got, want)
	}
	if len(lb.PrivateNet) != 1 || !strings.HasPrefix(lb.PrivateNet[0].IP.String(), "10.0.1.") {
		t.Errorf("lb private net = %+v, want an IP in 10.0.1.0/24", lb.PrivateNet)
	}
	if ip := lb.PublicNet.IPv4.IP; ip == nil || !ip.IsLoopback() {
		t.Errorf("lb public ipv4 = %v, want loopback", ip)
	}

	// Servers: running, loopback public IPs, unique private IPs, firewall applied.
	servers, err := c.Server.AllWithOpts(ctx(t), hcloud.ServerListOpts{ListOpts: hcloud.ListOpts{LabelSelector: "cluster=demo"}})
	if err != nil {
		t.Fatalf("list servers: %v", err)
	}
	if len(servers) != 4 {
		t.Fatalf("listed %d servers, want 4", len(servers))
	}
	seen := map[string]bool{}
	for _, s := range servers {
		if s.Status != hcloud.ServerStatusRunning {
			t.Errorf("%s status = %s, want running", s.Name, s.Status)
		}
		if !s.PublicNet.IPv4.IP.IsLoopback() {
			t.Errorf("%s public ipv4 %v is not loopback", s.Name, s.PublicNet.IPv4.IP)
		}
		if len(s.PrivateNet) != 1 || seen[s.PrivateNet[0].IP.String()] {
			t.Errorf("%s private net %+v: want one unique IP", s.Name, s.PrivateNet)
		} else {
			seen[s.PrivateNet[0].IP.String()] = true
		}
		if len(s.PublicNet.Firewalls) != 1 || s.PublicNet.Firewalls[0].Firewall.ID != fwRes.Firewall.ID {
			t.Errorf("%s firewalls = %+v, want the demo firewall", s.Name, s.PublicNet.Firewalls)
		}
		wantLB := roles[s.Name] == "worker"
		if (len(s.LoadBalancers) == 1) != wantLB {
			t.Errorf("%s load balancers = %v, want target=%v", s.Name, s.LoadBalancers, wantLB)
		}
	}
	workers, err := c.Server.AllWithOpts(ctx(t), hcloud.ServerListOpts{ListOpts: hcloud.ListOpts{LabelSelector: "cluster=demo,role in (worker)"}})
	if err != nil || len(workers) != 2 {
		t.Fatalf("list workers: %d, %v", len(workers), err)
	}

	fw, _, err := c.Firewall.GetByID(ctx(t), fwRes.Firewall.ID)
	if err != nil {
		t.Fatal(err)
	}
	if len(fw.AppliedTo) != 1 || len(fw.AppliedTo[0].AppliedToResources) != 4 {
		t.Errorf("firewall applied_to = %+v, want the selector resolved to 4 servers", fw.AppliedTo)
	}
	gotPG, _, err := c.PlacementGroup.GetByID(ctx(t), pg.PlacementGroup.ID)
	if err != nil || len(gotPG.Servers) != 2 {
		t.Errorf("placement group servers = %v (%v), want the two control planes", gotPG.Servers, err)
	}
	gotNet, _, err := c.Network.GetByID(ctx(t), network.ID)
	if err != nil || len(gotNet.Servers) != 4 || len(gotNet.LoadBalancers) != 1 || len(gotNet.Subnets) != 2 || len(gotNet.Routes) != 1 {
		t.Errorf("network = %+v (%v), want 4 servers, 1 load balancer, 2 subnets, 1 route", gotNet, err)
	}

	// Hooks saw every boot with the data the sandbox needs.
	_, on := rec.snapshot()
	if len(on) != 4 {
		t.Fatalf("powered-on hooks = %d, want 4", len(on))
	}
	for _, info := range on {
		if info.ServerType != "cpx22" || info.Location != "fsn1" || len(info.PrivateIPs) != 1 || info.Rescue ||
			!strings.HasPrefix(info.UserData, "#talos config for ") || !net.ParseIP(info.PublicIPv4).IsLoopback() {
			t.Errorf("hook info = %+v", info)
		}
	}

	// Deleting a worker removes it from the resolved targets and fires hooks.
	del, _, err := c.Server.DeleteWithResult(ctx(t), &hcloud.Server{ID: ids["demo-w-2"]})
	if err != nil {
		t.Fatalf("delete server: %v", err)
	}
	e.wait(t, del.Action)
	lb, _, _ = c.LoadBalancer.GetByID(ctx(t), lb.ID)
	if n := len(lb.Targets[0].Targets); n != 1 {
		t.Errorf("after delete, %d resolved targets, want 1", n)
	}
	events, _ := rec.snapshot()
	if tail := events[len(events)-2:]; !slices.Equal(tail, []string{"off", "deleted"}) {
		t.Errorf("last hook events = %v, want [off deleted]", tail)
	}
	counts := e.fake.Counts()
	if counts["servers"] != 3 || counts["primary_ips"] != 6 || counts["networks"] != 1 || counts["load_balancers"] != 1 ||
		counts["firewalls"] != 1 || counts["placement_groups"] != 1 || counts["ssh_keys"] != 1 || counts["images"] != 0 {
		t.Errorf("counts = %v", counts)
	}

	// Deleting the network detaches what is attached, as Hetzner does.
	if _, err := c.Network.Delete(ctx(t), network); err != nil {
		t.Fatalf("delete network: %v", err)
	}
	for _, s := range e.fake.Servers() {
		if len(s.PrivateIPs) != 0 {
			t.Errorf("server %s still has private IPs %v", s.Name, s.PrivateIPs)
		}
	}
}
