package talosfake_test

import (
	"context"
	"errors"
	"net"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/cosi-project/runtime/pkg/safe"
	"github.com/siderolabs/talos/pkg/machinery/api/machine"
	"github.com/siderolabs/talos/pkg/machinery/client"
	"github.com/siderolabs/talos/pkg/machinery/resources/runtime"
	"google.golang.org/grpc/codes"

	"github.com/ohmytalos/ohmytalos/internal/sandbox/talosfake"
	"github.com/ohmytalos/ohmytalos/internal/talos/talosapi"
)

const testSchematic = "376567988ad370138ad8b2698212367b8edcb69b5fd68c80be1f2ec7d603b4ba"

func TestFirewallAdmitDropsConnections(t *testing.T) {
	t.Parallel()

	fx := must(t, plainFixture)
	e := newEnv(t)
	e.tf = talosfake.NewCluster(talosfake.ClusterOptions{Admit: func(id int64, _ netip.Addr, port int) bool {
		return id != 121 || port != talosfake.DefaultPort
	}})
	n := e.start(121, fx.ControlPlane, nil)
	<-n.Ready()

	conn, err := net.DialTimeout("tcp", n.Endpoint(), time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()

	_ = conn.SetReadDeadline(time.Now().Add(2 * time.Second))
	if _, err := conn.Read(make([]byte, 1)); err == nil || errors.Is(err, context.DeadlineExceeded) || strings.Contains(err.Error(), "timeout") {
		t.Fatalf("firewalled connection was not dropped: %v", err)
	}
}

func TestMaintenanceModeServesSelfSignedTLS(t *testing.T) {
	ctx, fx, e := parallelEnv(t, plainFixture)

	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	n := e.start(131, nil, nil)

	if !n.Maintenance() {
		t.Fatal("node without config is not in maintenance mode")
	}

	err := dial(t, fx.Talosconfig, n).WaitReady(ctx)
	if !errors.Is(err, talosapi.ErrTrust) {
		t.Fatalf("cluster talosconfig against maintenance mode: want a TLS trust error, got %v", err)
	}
}

func TestUpgradeRebootsIntoNewVersionAndSchematic(t *testing.T) {
	ctx, fx, e := parallelEnv(t, plainFixture)
	cp := e.start(141, fx.ControlPlane, func(o *talosfake.NodeOptions) { o.SchematicID = strings.Repeat("a", 64) })
	wk := e.start(142, fx.Worker, nil)

	bootstrap(t, ctx, fx.Talosconfig, cp)

	raw := rawDial(t, fx.Talosconfig, cp)

	ext, err := safe.StateGetByID[*runtime.ExtensionStatus](ctx, raw.COSI, "schematic")
	if err != nil || ext.TypedSpec().Metadata.Version != strings.Repeat("a", 64) {
		t.Fatalf("schematic extension = %v, %v", ext, err)
	}

	if _, err := raw.UpgradeWithOptions(ctx, client.WithUpgradeImage("factory.talos.dev/hcloud-installer/not-a-schematic:v1.13.9")); err == nil {
		t.Fatal("upgrade with a malformed installer reference accepted")
	}

	ref := "factory.talos.dev/hcloud-installer/" + testSchematic + ":v1.14.0"
	if _, err := raw.UpgradeWithOptions(ctx, client.WithUpgradeImage(ref)); err != nil {
		t.Fatal(err)
	}

	waitFor(t, ctx, "the node back at v1.14.0 with the new schematic", func() (bool, string) {
		return cp.TalosVersion() == "v1.14.0" && cp.SchematicID() == testSchematic, cp.TalosVersion() + " " + cp.SchematicID()
	})

	c := ready(t, ctx, fx.Talosconfig, cp)

	members, err := c.EtcdMembers(ctx)
	if err != nil || len(members) != 1 {
		t.Fatalf("members after upgrade = %v, %v", members, err)
	}

	// A failing node keeps its version.
	e.tf.FailUpgrade(142)

	rw := rawDial(t, fx.Talosconfig, wk)
	if _, err := rw.UpgradeWithOptions(ctx, client.WithUpgradeImage(ref)); err != nil {
		t.Fatal(err)
	}

	time.Sleep(time.Second)

	ready(t, ctx, fx.Talosconfig, wk)

	if v := wk.TalosVersion(); v != talosfake.DefaultTalosVersion {
		t.Fatalf("failed upgrade left version %s", v)
	}
}

func TestEtcdRemoveRefusesLastMember(t *testing.T) {
	ctx, fx, e := parallelEnv(t, plainFixture)
	cp := e.start(151, fx.ControlPlane, nil)

	bootstrap(t, ctx, fx.Talosconfig, cp)

	raw := rawDial(t, fx.Talosconfig, cp)

	resp, err := raw.EtcdMemberList(ctx, &machine.EtcdMemberListRequest{})
	if err != nil {
		t.Fatal(err)
	}

	id := resp.GetMessages()[0].GetMembers()[0].GetId()

	err = raw.EtcdRemoveMemberByID(ctx, &machine.EtcdRemoveMemberByIDRequest{MemberId: id})
	if err == nil || !strings.Contains(err.Error(), "not enough started members") {
		t.Fatalf("removing the last member: %v", err)
	}

	err = raw.EtcdRemoveMemberByID(ctx, &machine.EtcdRemoveMemberByIDRequest{MemberId: id + 1})
	if client.StatusCode(err) != codes.NotFound {
		t.Fatalf("removing an unknown member: %v", err)
	}
}

func TestStateCallsGoToTheNamedNode(t *testing.T) {
	ctx, fx, e := parallelEnv(t, plainFixture)
	cp := e.start(161, fx.ControlPlane, func(o *talosfake.NodeOptions) { o.SchematicID = strings.Repeat("a", 64) })
	wk := e.start(162, fx.Worker, func(o *talosfake.NodeOptions) { o.SchematicID = strings.Repeat("b", 64) })
	bootstrap(t, ctx, fx.Talosconfig, cp)
	ready(t, ctx, fx.Talosconfig, wk)

	raw := rawDial(t, fx.Talosconfig, cp)

	// apid proxies a call with node metadata to that node (talosctl -n).
	for node, want := range map[string]string{"": strings.Repeat("a", 64), "10.0.1.162": strings.Repeat("b", 64)} {
		cctx := ctx
		if node != "" {
			cctx = client.WithNode(ctx, node)
		}

		ext, err := safe.StateGetByID[*runtime.ExtensionStatus](cctx, raw.COSI, "schematic")
		if err != nil || ext.TypedSpec().Metadata.Version != want {
			t.Fatalf("schematic via node %q = %v, %v; want %s", node, ext, err, want)
		}
	}

	_, err := safe.StateGetByID[*runtime.ExtensionStatus](client.WithNode(ctx, "10.0.1.199"), raw.COSI, "schematic")
	if client.StatusCode(err) != codes.Unavailable || !strings.Contains(err.Error(), "connection refused") {
		t.Fatalf("a call to an address no node has = %v, want Unavailable (connection refused)", err)
	}
}
