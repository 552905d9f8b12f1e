package hcloudsource_test

import (
	"context"
	"net"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/hetznercloud/hcloud-go/v2/hcloud"

	"github.com/ohmytalos/ohmytalos/internal/doctor"
	"github.com/ohmytalos/ohmytalos/internal/doctor/hcloudsource"
	"github.com/ohmytalos/ohmytalos/internal/sandbox/hcloudfake"
)

const token = "test-token-0123456789"

type world struct {
	t       *testing.T
	ctx     context.Context
	c       *hcloud.Client
	network *hcloud.Network
	ids     map[string]*hcloud.Server
}

func newWorld(t *testing.T) *world {
	t.Helper()
	srv := httptest.NewServer(hcloudfake.New(hcloudfake.Options{Token: token}))
	t.Cleanup(srv.Close)
	c := hcloud.NewClient(hcloud.WithEndpoint(srv.URL), hcloud.WithToken(token),
		hcloud.WithPollOpts(hcloud.PollOpts{BackoffFunc: hcloud.ConstantBackoff(2 * time.Millisecond)}),
		hcloud.WithRetryOpts(hcloud.RetryOpts{BackoffFunc: hcloud.ConstantBackoff(time.Millisecond), MaxRetries: 3}))
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	t.Cleanup(cancel)
	_, ipr, _ := net.ParseCIDR("10.0.0.0/16")
	_, sub, _ := net.ParseCIDR("10.0.1.0/24")
	network, _, err := c.Network.Create(ctx, hcloud.NetworkCreateOpts{Name: "prod", IPRange: ipr,
		Subnets: []hcloud.NetworkSubnet{{Type: hcloud.NetworkSubnetTypeCloud, IPRange: sub, NetworkZone: hcloud.NetworkZoneEUCentral}}})
	if err != nil {
		t.Fatalf("create network: %v", err)
	}
	return &world{t: t, ctx: ctx, c: c, network: network, ids: map[string]*hcloud.Server{}}
}

func (w *world) wait(actions ...*hcloud.Action) {
	w.t.Helper()
	if err := w.c.Action.WaitFor(w.ctx, actions...); err != nil {
		w.t.Fatalf("wait: %v", err)
	}
}

func (w *world) server(name string, labels map[string]string) {
	w.t.Helper()
	res, _, err := w.c.Server.Create(w.ctx, hcloud.ServerCreateOpts{Name: name, ServerType: &hcloud.ServerType{Name: "cpx22"},
		Image: &hcloud.Image{Name: "debian-12"}, Location: &hcloud.Location{Name: "fsn1"}, Networks: []*hcloud.Network{w.network}, Labels: labels})
	if err != nil {
		w.t.Fatalf("create server %s: %v", name, err)
	}
	w.wait(append([]*hcloud.Action{res.Action}, res.NextActions...)...)
	w.ids[name] = res.Server
}

func (w *world) lb(name string, labels map[string]string, targets ...hcloud.LoadBalancerCreateOptsTarget) {
	w.t.Helper()
	res, _, err := w.c.LoadBalancer.Create(w.ctx, hcloud.LoadBalancerCreateOpts{Name: name, LoadBalancerType: &hcloud.LoadBalancerType{Name: "lb11"},
		Location: &hcloud.Location{Name: "fsn1"}, Network: w.network, Labels: labels,
		Services: []hcloud.LoadBalancerCreateOptsService{{Protocol: hcloud.LoadBalancerServiceProtocolTCP, ListenPort: hcloud.Ptr(443), DestinationPort: hcloud.Ptr(30443),
			Proxyprotocol: hcloud.Ptr(false), HealthCheck: &hcloud.LoadBalancerCreateOptsServiceHealthCheck{Protocol: hcloud.LoadBalancerServiceProtocolTCP,
				Port: hcloud.Ptr(30443), Interval: hcloud.Ptr(15 * time.Second), Timeout: hcloud.Ptr(10 * time.Second), Retries: hcloud.Ptr(3)}}},
		Targets: targets})
	if err != nil {
		w.t.Fatalf("create load balancer %s: %v", name, err)
	}
	w.wait(res.Action)
}

func prodLabels(pool string) map[string]string {
	return map[string]string{hcloudsource.LabelCluster: "prod", "ohmytalos.io/pool": pool}
}

func TestSourceAgainstFake(t *testing.T) {
	w := newWorld(t)
	w.server("prod-cp-1", prodLabels("control-plane"))
	w.server("prod-worker-1", prodLabels("worker"))
	w.server("staging-worker-1", map[string]string{hcloudsource.LabelCluster: "staging"})

	w.lb("prod-ingress", prodLabels("ingress"), hcloud.LoadBalancerCreateOptsTarget{Type: hcloud.LoadBalancerTargetTypeLabelSelector,
		LabelSelector: hcloud.LoadBalancerCreateOptsTargetLabelSelector{Selector: "ohmytalos.io/cluster=prod,ohmytalos.io/pool=worker"}, UsePrivateIP: hcloud.Ptr(true)})
	// A CCM load balancer of this cluster that has no target yet, and one of
	// the staging cluster (its target is a staging server): only the first is ours.
	w.lb("a0ccm-prod", map[string]string{doctor.LabelCCMServiceUID: "0ccm-prod"})
	w.lb("a0ccm-staging", map[string]string{doctor.LabelCCMServiceUID: "0ccm-staging"}, hcloud.LoadBalancerCreateOptsTarget{
		Type: hcloud.LoadBalancerTargetTypeServer, Server: hcloud.LoadBalancerCreateOptsTargetServer{Server: w.ids["staging-worker-1"]}, UsePrivateIP: hcloud.Ptr(true)})

	res, _, err := w.c.Server.CreateImage(w.ctx, w.ids["prod-worker-1"], &hcloud.ServerCreateImageOpts{Type: hcloud.ImageTypeSnapshot,
		Description: hcloud.Ptr("talos v1.13.9 amd64"), Labels: map[string]string{"os": "talos", "version": "v1.13.9", "arch": "amd64", "schematic": "376567988ad370138ad8b2698212367b8edcb69b5fd68c80be1f2ec7d603b4b"}})
	if err != nil {
		t.Fatalf("create image: %v", err)
	}
	w.wait(res.Action)

	src := hcloudsource.New(w.c, "prod")
	servers, err := src.Servers(w.ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(servers) != 2 || servers[0].Labels["ohmytalos.io/pool"] == "" {
		t.Fatalf("servers = %+v, want the two prod servers with labels", servers)
	}

	lbs, err := src.LoadBalancers(w.ctx)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, lb := range lbs {
		names = append(names, lb.Name)
	}
	if got := strings.Join(names, ","); got != "a0ccm-prod,prod-ingress" {
		t.Fatalf("load balancers = %s, want a0ccm-prod,prod-ingress", got)
	}
	// Health is unknown until the fake's first check interval has passed.
	ingress := lbs[1]
	if len(ingress.Targets) != 1 || ingress.Targets[0].Selector != "ohmytalos.io/cluster=prod,ohmytalos.io/pool=worker" ||
		len(ingress.Targets[0].Resolved) != 1 || ingress.Targets[0].Resolved[0] != (doctor.LBResolved{ServerName: "prod-worker-1", Health: "unknown"}) {
		t.Fatalf("ingress targets = %+v", ingress.Targets)
	}

	snaps, err := src.Snapshots(w.ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(snaps) != 1 || snaps[0].Labels["version"] != "v1.13.9" || snaps[0].Architecture != "x86" {
		t.Fatalf("snapshots = %+v", snaps)
	}

	// End to end: the doctor flags the CCM load balancer without targets and
	// finds the snapshot.
	env := &doctor.Env{ClusterName: "prod", Cloud: src, ExpectedImages: []doctor.ImageKey{
		{Arch: "amd64", TalosVersion: "v1.13.9", SchematicID: "376567988ad370138ad8b2698212367b8edcb69b5fd68c80be1f2ec7d603b4ba"}}}
	rs := doctor.Run(w.ctx, env, []string{"lb-targets", "images"}, nil)
	if rs[0].Status != doctor.StatusFail || !strings.Contains(strings.Join(rs[0].Evidence, "\n"), "a0ccm-prod has no targets") {
		t.Errorf("lb-targets = %+v", rs[0])
	}
	if rs[1].Status != doctor.StatusPass {
		t.Errorf("images = %+v", rs[1])
	}

	// A powered-off worker fails the load balancer's health check.
	off, _, err := w.c.Server.Poweroff(w.ctx, w.ids["prod-worker-1"])
	if err != nil {
		t.Fatalf("power off: %v", err)
	}
	w.wait(off)
	lbs, err = src.LoadBalancers(w.ctx)
	if err != nil {
		t.Fatal(err)
	}
	if got := lbs[1].Targets[0].Resolved; len(got) != 1 || got[0].Health != "unhealthy" {
		t.Fatalf("after power off: %+v", got)
	}
}

func TestSourceErrorsNameTheCall(t *testing.T) {
	srv := httptest.NewServer(hcloudfake.New(hcloudfake.Options{Token: token}))
	defer srv.Close()
	c := hcloud.NewClient(hcloud.WithEndpoint(srv.URL), hcloud.WithToken("wrong-token"))
	_, err := hcloudsource.New(c, "prod").LoadBalancers(context.Background())
	if err == nil || !strings.Contains(err.Error(), "list the load balancers of cluster prod") || strings.Contains(err.Error(), "wrong-token") {
		t.Fatalf("err = %v", err)
	}
	if !hcloud.IsError(err, hcloud.ErrorCodeUnauthorized) {
		t.Errorf("error does not wrap the API error: %v", err)
	}
}
