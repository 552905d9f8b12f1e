package talosfake_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/siderolabs/talos/pkg/machinery/api/machine"
	"github.com/siderolabs/talos/pkg/machinery/client"
	clientconfig "github.com/siderolabs/talos/pkg/machinery/client/config"
	"google.golang.org/grpc/codes"

	"github.com/ohmytalos/ohmytalos/internal/sandbox/talosfake"
	"github.com/ohmytalos/ohmytalos/internal/sandbox/talosfake/fixture"
	"github.com/ohmytalos/ohmytalos/internal/talos/talosapi"
)

// Bundles are slow to generate (RSA keys): each is made once per test binary
// and shared; every test still runs its own talosfake.Cluster.
var (
	vipFixture = sync.OnceValues(func() (*fixture.Cluster, error) {
		return fixture.New("vip", fixture.Options{VIP: "10.0.1.100", VIPLink: "eth1", Layer2: true})
	})
	hcloudVIPFixture = sync.OnceValues(func() (*fixture.Cluster, error) {
		return fixture.New("hvip", fixture.Options{VIP: "10.0.1.100", VIPLink: "eth1"})
	})
	novipFixture = sync.OnceValues(func() (*fixture.Cluster, error) {
		// enp7s0 is the private NIC's name under Debian, not under Talos on Hetzner.
		return fixture.New("novip", fixture.Options{VIP: "10.0.1.100", VIPLink: "enp7s0", Layer2: true})
	})
	plainFixture = sync.OnceValues(func() (*fixture.Cluster, error) { return fixture.New("plain", fixture.Options{}) })
	otherFixture = sync.OnceValues(func() (*fixture.Cluster, error) { return fixture.New("other", fixture.Options{}) })
)

func must(t *testing.T, get func() (*fixture.Cluster, error)) *fixture.Cluster {
	t.Helper()

	fx, err := get()
	if err != nil {
		t.Fatal(err)
	}

	return fx
}

type env struct {
	t   *testing.T
	tf  *talosfake.Cluster
	pfx string
}

func newEnv(t *testing.T) *env {
	t.Helper()

	return &env{t: t, tf: talosfake.NewCluster(talosfake.ClusterOptions{}), pfx: fixture.LoopbackPrefix()}
}

// parallelEnv marks t parallel and returns what most tests here start from:
// a context that ends within a minute, the fixture get makes, and a fresh
// cluster.
func parallelEnv(t *testing.T, get func() (*fixture.Cluster, error)) (context.Context, *fixture.Cluster, *env) {
	t.Helper()
	t.Parallel()

	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	t.Cleanup(cancel)

	return ctx, must(t, get), newEnv(t)
}

// bootstrap dials n and bootstraps etcd on it, failing unless this call
// was the one that bootstrapped.
func bootstrap(t *testing.T, ctx context.Context, talosconfig []byte, n *talosfake.Node) *talosapi.Client {
	t.Helper()

	c := dial(t, talosconfig, n)
	if did, err := c.BootstrapOnce(ctx); !did || err != nil {
		t.Fatalf("BootstrapOnce on %s = %v, %v", n.Name(), did, err)
	}

	return c
}

// ready dials n and waits until its API answers.
func ready(t *testing.T, ctx context.Context, talosconfig []byte, n *talosfake.Node) *talosapi.Client {
	t.Helper()

	c := dial(t, talosconfig, n)
	if err := c.WaitReady(ctx); err != nil {
		t.Fatal(err)
	}

	return c
}

func (e *env) start(id int64, cfg []byte, mod func(*talosfake.NodeOptions)) *talosfake.Node {
	e.t.Helper()

	o := talosfake.NodeOptions{
		ServerID:      id,
		Name:          fmt.Sprintf("node-%d", id),
		PublicIP:      fmt.Sprintf("%s%d", e.pfx, id),
		PrivateIP:     fmt.Sprintf("10.0.1.%d", id),
		Port:          -1,
		MachineConfig: cfg,
	}
	if mod != nil {
		mod(&o)
	}

	n, err := e.tf.StartNode(e.t.Context(), o)
	if err != nil {
		e.t.Fatal(err)
	}

	e.t.Cleanup(n.Stop)

	return n
}

func dial(t *testing.T, talosconfig []byte, n *talosfake.Node) *talosapi.Client {
	t.Helper()

	c, err := talosapi.Connect(t.Context(), talosconfig, n.Endpoint())
	if err != nil {
		t.Fatal(err)
	}

	t.Cleanup(func() { _ = c.Close() })

	return c
}

func rawDial(t *testing.T, talosconfig []byte, n *talosfake.Node) *client.Client {
	t.Helper()

	cfg, err := clientconfig.FromBytes(talosconfig)
	if err != nil {
		t.Fatal(err)
	}

	c, err := client.New(t.Context(), client.WithConfig(cfg), client.WithEndpoints(n.Endpoint()))
	if err != nil {
		t.Fatal(err)
	}

	t.Cleanup(func() { _ = c.Close() })

	return c
}

func hasAddr(t *testing.T, ctx context.Context, c *talosapi.Client, link, cidr string) bool {
	t.Helper()

	addrs, err := c.Addresses(ctx)
	if err != nil {
		t.Fatal(err)
	}

	return slices.Contains(addrs, talosapi.Address{Link: link, CIDR: cidr})
}

func TestVIPClaimedOnExistingLinkAndFailsOver(t *testing.T) {
	ctx, fx, e := parallelEnv(t, vipFixture)
	cps := []*talosfake.Node{e.start(11, fx.ControlPlane, nil), e.start(12, fx.ControlPlane, nil), e.start(13, fx.ControlPlane, nil)}
	e.start(14, fx.Worker, nil)

	if got := e.tf.VIPHolders("vip"); len(got) != 0 {
		t.Fatalf("VIP claimed before bootstrap by %v", got)
	}

	bootstrap(t, ctx, fx.Talosconfig, cps[1])

	holders := e.tf.VIPHolders("vip")
	if len(holders) != 1 {
		t.Fatalf("VIP holders after bootstrap = %v, want exactly one", holders)
	}

	var holder *talosfake.Node

	for _, n := range cps {
		if n.Name() == holders[0] {
			holder = n
		}

		got := hasAddr(t, ctx, dial(t, fx.Talosconfig, n), "eth1", "10.0.1.100/32")
		if got != (n.Name() == holders[0]) {
			t.Errorf("%s reports VIP on eth1 = %v, holder is %s", n.Name(), got, holders[0])
		}
	}

	holder.Stop()
	holder.Stop() // idempotent

	after := e.tf.VIPHolders("vip")
	if len(after) != 1 || after[0] == holders[0] {
		t.Fatalf("VIP holders after %s stopped = %v, want one other control plane", holders[0], after)
	}
}

func TestVIPOnMissingLinkIsNeverClaimed(t *testing.T) {
	ctx, fx, e := parallelEnv(t, novipFixture)
	cp := e.start(21, fx.ControlPlane, nil)
	e.start(22, fx.ControlPlane, nil)

	c := bootstrap(t, ctx, fx.Talosconfig, cp)

	if got := e.tf.VIPHolders("novip"); len(got) != 0 {
		t.Fatalf("VIP on a missing link claimed by %v", got)
	}

	addrs, err := c.Addresses(ctx)
	if err != nil {
		t.Fatal(err)
	}

	for _, a := range addrs {
		if strings.HasPrefix(a.CIDR, "10.0.1.100/") {
			t.Fatalf("VIP address present: %+v", a)
		}
	}

	// Fixing the link through ApplyConfiguration makes the VIP appear, live.
	fixed := strings.Replace(string(fx.ControlPlane), "link: enp7s0", "link: eth1", 1)
	raw := rawDial(t, fx.Talosconfig, cp)

	resp, err := raw.ApplyConfiguration(ctx, &machine.ApplyConfigurationRequest{
		Data: []byte(fixed),
		Mode: machine.ApplyConfigurationRequest_AUTO,
	})
	if err != nil {
		t.Fatal(err)
	}

	m := resp.GetMessages()[0]
	if m.GetMode() != machine.ApplyConfigurationRequest_NO_REBOOT || m.GetModeDetails() != "Applied configuration without a reboot" {
		t.Fatalf("apply answered %s %q", m.GetMode(), m.GetModeDetails())
	}

	if got := e.tf.VIPHolders("novip"); !slices.Equal(got, []string{"node-21"}) {
		t.Fatalf("VIP holders after fixing the link = %v, want [node-21]", got)
	}

	if !hasAddr(t, ctx, c, "eth1", "10.0.1.100/32") {
		t.Fatal("holder does not report the VIP on eth1")
	}
}

func TestTalosErrorsMirrorMachined(t *testing.T) {
	ctx, fx, e := parallelEnv(t, plainFixture)
	cp := e.start(31, fx.ControlPlane, nil)
	wk := e.start(32, fx.Worker, nil)

	rcp, rwk := rawDial(t, fx.Talosconfig, cp), rawDial(t, fx.Talosconfig, wk)

	// Services come up after the boot: until then Bootstrap is not available.
	err := rcp.Bootstrap(ctx, &machine.BootstrapRequest{})
	if client.StatusCode(err) != codes.FailedPrecondition || !strings.Contains(err.Error(), "bootstrap is not available yet") {
		t.Fatalf("bootstrap right after boot: %v", err)
	}

	// Before bootstrap machined's etcd client waits for a connection until
	// the caller's deadline.
	short, cancelShort := context.WithTimeout(ctx, 300*time.Millisecond)
	if _, err := rcp.EtcdMemberList(short, &machine.EtcdMemberListRequest{}); client.StatusCode(err) != codes.DeadlineExceeded {
		t.Fatalf("member list before bootstrap: %v", err)
	}

	cancelShort()

	time.Sleep(talosfake.DefaultServicesDelay + 100*time.Millisecond)

	err = rwk.Bootstrap(ctx, &machine.BootstrapRequest{})
	if client.StatusCode(err) != codes.FailedPrecondition || !strings.Contains(err.Error(), "bootstrap can only be performed on a control plane node") {
		t.Fatalf("bootstrap on worker: %v", err)
	}

	if err := rcp.Bootstrap(ctx, &machine.BootstrapRequest{}); err != nil {
		t.Fatal(err)
	}

	err = rcp.Bootstrap(ctx, &machine.BootstrapRequest{})
	if client.StatusCode(err) != codes.AlreadyExists || !strings.Contains(err.Error(), "etcd data directory is not empty") {
		t.Fatalf("second bootstrap: %v", err)
	}

	_, err = rwk.EtcdMemberList(ctx, &machine.EtcdMemberListRequest{})
	if client.StatusCode(err) != codes.Unimplemented || !strings.Contains(err.Error(), "member list is only available on control plane nodes") {
		t.Fatalf("member list on worker: %v", err)
	}

	if _, err := rcp.ApplyConfiguration(ctx, &machine.ApplyConfigurationRequest{Data: []byte("not: a talos config")}); client.StatusCode(err) != codes.InvalidArgument {
		t.Fatalf("apply garbage: %v", err)
	}

	if got := e.tf.Bootstraps("plain"); got != 1 {
		t.Fatalf("Bootstraps = %d, want 1", got)
	}
}

func TestClustersAreIsolated(t *testing.T) {
	ctx, a, e := parallelEnv(t, plainFixture)
	b := must(t, otherFixture)

	na := e.start(41, a.ControlPlane, nil)
	nb := e.start(42, b.ControlPlane, nil)

	for _, tc := range []struct {
		cfg []byte
		n   *talosfake.Node
	}{{a.Talosconfig, na}, {b.Talosconfig, nb}} {
		bootstrap(t, ctx, tc.cfg, tc.n)
	}

	if e.tf.Bootstraps("plain") != 1 || e.tf.Bootstraps("other") != 1 {
		t.Fatalf("bootstraps plain=%d other=%d", e.tf.Bootstraps("plain"), e.tf.Bootstraps("other"))
	}

	members, err := dial(t, a.Talosconfig, na).EtcdMembers(ctx)
	if err != nil || len(members) != 1 || members[0].Name != na.Name() {
		t.Fatalf("alpha members = %+v, %v", members, err)
	}

	// alpha's credentials are not trusted by beta's node.
	err = dial(t, a.Talosconfig, nb).WaitReady(ctx)
	if !errors.Is(err, talosapi.ErrTrust) {
		t.Fatalf("alpha talosconfig against beta: %v", err)
	}
}

func TestForeignClientCertificateIsRejected(t *testing.T) {
	ctx, own, e := parallelEnv(t, plainFixture)
	other := must(t, otherFixture)

	// The server CA is right, the client certificate comes from another bundle.
	mixed, err := clientconfig.FromBytes(own.Talosconfig)
	if err != nil {
		t.Fatal(err)
	}

	foreign, err := clientconfig.FromBytes(other.Talosconfig)
	if err != nil {
		t.Fatal(err)
	}

	mixed.Contexts[mixed.Context].Crt = foreign.Contexts[foreign.Context].Crt
	mixed.Contexts[mixed.Context].Key = foreign.Contexts[foreign.Context].Key

	mixedBytes, err := mixed.Bytes()
	if err != nil {
		t.Fatal(err)
	}

	n := e.start(51, own.ControlPlane, nil)

	err = dial(t, mixedBytes, n).WaitReady(ctx)
	if !errors.Is(err, talosapi.ErrTrust) {
		t.Fatalf("foreign client certificate: want ErrTrust, got %v", err)
	}
}

func TestBootDelayRefusesThenServes(t *testing.T) {
	ctx, fx, e := parallelEnv(t, plainFixture)
	n := e.start(61, fx.ControlPlane, func(o *talosfake.NodeOptions) { o.BootDelay = 700 * time.Millisecond })

	if conn, err := net.DialTimeout("tcp", n.Endpoint(), time.Second); err == nil {
		_ = conn.Close()

		t.Fatal("API accepted a connection while booting")
	}

	c := dial(t, fx.Talosconfig, n)

	start := time.Now()
	if err := c.WaitReady(ctx); err != nil {
		t.Fatal(err)
	}

	if waited := time.Since(start); waited < 300*time.Millisecond {
		t.Fatalf("WaitReady returned after %s, before the node booted", waited)
	}
}

func TestWorkerWaitsForAControlPlane(t *testing.T) {
	ctx, fx, e := parallelEnv(t, plainFixture)
	wk := e.start(71, fx.Worker, nil)
	c := dial(t, fx.Talosconfig, wk)

	short, cancelShort := context.WithTimeout(ctx, 500*time.Millisecond)
	defer cancelShort()

	if _, err := c.Version(short); err == nil || !talosapi.IsRetryable(err) {
		t.Fatalf("worker without control plane: want a retryable error, got %v", err)
	}

	e.start(72, fx.ControlPlane, nil)

	if err := c.WaitReady(ctx); err != nil {
		t.Fatal(err)
	}
}

func TestStartNodeRejectsBadInput(t *testing.T) {
	t.Parallel()

	fx := must(t, plainFixture)

	e := newEnv(t)
	e.start(81, fx.ControlPlane, nil)

	cases := map[string]talosfake.NodeOptions{
		"duplicate server": {ServerID: 81, Name: "dup", PublicIP: e.pfx + "82", Port: -1, MachineConfig: fx.ControlPlane},
		"bad id":           {ServerID: 0, Name: "zero", PublicIP: e.pfx + "84", Port: -1, MachineConfig: fx.ControlPlane},
	}

	for name, o := range cases {
		if _, err := e.tf.StartNode(t.Context(), o); err == nil {
			t.Errorf("%s: StartNode succeeded", name)
		}
	}
}

func TestStagedConfigSurvivesReboot(t *testing.T) {
	ctx, fx, e := parallelEnv(t, novipFixture)
	cp := e.start(101, fx.ControlPlane, nil)

	bootstrap(t, ctx, fx.Talosconfig, cp)

	fixed := strings.Replace(string(fx.ControlPlane), "link: enp7s0", "link: eth1", 1)

	resp, err := rawDial(t, fx.Talosconfig, cp).ApplyConfiguration(ctx, &machine.ApplyConfigurationRequest{
		Data: []byte(fixed),
		Mode: machine.ApplyConfigurationRequest_STAGED,
	})
	if err != nil {
		t.Fatal(err)
	}

	if d := resp.GetMessages()[0].GetModeDetails(); d != "Staged configuration to be applied after the next reboot" {
		t.Fatalf("staged apply answered %q", d)
	}

	if got := e.tf.VIPHolders("novip"); len(got) != 0 {
		t.Fatalf("staged config took effect before the reboot: VIP held by %v", got)
	}

	// Reboot: the server's user_data still names enp7s0, the STATE partition wins.
	e.tf.StopNode(101)
	e.start(101, fx.ControlPlane, nil)

	if got := e.tf.VIPHolders("novip"); !slices.Equal(got, []string{"node-101"}) {
		t.Fatalf("VIP holders after reboot = %v, want [node-101]", got)
	}
}

func TestHCloudVIPWithoutHetznerAPIIsNeverHeld(t *testing.T) {
	ctx, fx, e := parallelEnv(t, hcloudVIPFixture)
	cp := e.start(111, fx.ControlPlane, nil)
	e.start(112, fx.ControlPlane, nil)

	bootstrap(t, ctx, fx.Talosconfig, cp)

	// An HCloud VIP is claimed only through change_alias_ips: with no
	// Hetzner API reachable every claim fails and nobody holds it.
	time.Sleep(300 * time.Millisecond)

	if got := e.tf.VIPHolders("hvip"); len(got) != 0 {
		t.Fatalf("HCloud VIP held without the Hetzner API by %v", got)
	}
}
