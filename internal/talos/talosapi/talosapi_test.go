package talosapi_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/siderolabs/talos/pkg/machinery/api/machine"
	"github.com/siderolabs/talos/pkg/machinery/client"
	clientconfig "github.com/siderolabs/talos/pkg/machinery/client/config"
	"go.yaml.in/yaml/v3"
	"google.golang.org/grpc/codes"

	"github.com/ohmytalos/ohmytalos/internal/sandbox/talosfake"
	"github.com/ohmytalos/ohmytalos/internal/sandbox/talosfake/fixture"
	"github.com/ohmytalos/ohmytalos/internal/talos/talosapi"
)

type sandbox struct {
	fx    *fixture.Cluster
	tf    *talosfake.Cluster
	cps   []*talosfake.Node
	wk    *talosfake.Node
	ipPfx string
}

// startSandbox runs 3 control planes and 1 worker on loopback addresses.
func startSandbox(t *testing.T, vipLink string) *sandbox {
	t.Helper()

	fx, err := fixture.New("sbx", fixture.Options{VIP: "10.0.1.100", VIPLink: vipLink})
	if err != nil {
		t.Fatal(err)
	}

	s := &sandbox{fx: fx, tf: talosfake.NewCluster(talosfake.ClusterOptions{}), ipPfx: fixture.LoopbackPrefix()}

	start := func(i int, cfg []byte) *talosfake.Node {
		n, err := s.tf.StartNode(t.Context(), talosfake.NodeOptions{
			ServerID:      int64(100 + i),
			Name:          fmt.Sprintf("sbx-node-%d", i),
			PublicIP:      fmt.Sprintf("%s%d", s.ipPfx, 10+i),
			PrivateIP:     fmt.Sprintf("10.0.1.%d", 10+i),
			Port:          -1,
			MachineConfig: cfg,
		})
		if err != nil {
			t.Fatal(err)
		}

		t.Cleanup(n.Stop)

		return n
	}

	for i := range 3 {
		s.cps = append(s.cps, start(i, fx.ControlPlane))
	}

	s.wk = start(3, fx.Worker)

	return s
}

func connect(t *testing.T, talosconfig []byte, n *talosfake.Node) *talosapi.Client {
	t.Helper()

	c, err := talosapi.Connect(t.Context(), talosconfig, n.Endpoint())
	if err != nil {
		t.Fatal(err)
	}

	t.Cleanup(func() { _ = c.Close() })

	return c
}

func TestClusterLifecycle(t *testing.T) {
	t.Parallel()

	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()

	s := startSandbox(t, "eth1")
	cp0 := connect(t, s.fx.Talosconfig, s.cps[0])

	if err := cp0.WaitReady(ctx); err != nil {
		t.Fatal(err)
	}

	v, err := cp0.Version(ctx)
	if err != nil || v != talosfake.DefaultTalosVersion {
		t.Fatalf("Version = %q, %v", v, err)
	}

	// Before bootstrap etcd does not run: retryable, and no VIP anywhere.
	// (machined's etcd client waits for a connection until the deadline).
	short, cancelShort := context.WithTimeout(ctx, 300*time.Millisecond)
	defer cancelShort()

	if _, err := cp0.EtcdMembers(short); !talosapi.IsRetryable(err) {
		t.Fatalf("EtcdMembers before bootstrap: want a retryable error, got %v", err)
	}

	if h := s.tf.VIPHolders("sbx"); len(h) != 0 {
		t.Fatalf("VIP held before bootstrap by %v", h)
	}

	did, err := cp0.BootstrapOnce(ctx)
	if err != nil || !did {
		t.Fatalf("first BootstrapOnce = %v, %v; want true", did, err)
	}

	did, err = cp0.BootstrapOnce(ctx)
	if err != nil || did {
		t.Fatalf("second BootstrapOnce = %v, %v; want false", did, err)
	}

	// Another control plane, unaware: BootstrapOnce still does nothing.
	cp1 := connect(t, s.fx.Talosconfig, s.cps[1])

	if did, err := cp1.BootstrapOnce(ctx); err != nil || did {
		t.Fatalf("BootstrapOnce on cp1 = %v, %v; want false", did, err)
	}

	if got := s.tf.Bootstraps("sbx"); got != 1 {
		t.Fatalf("Bootstraps = %d, want 1", got)
	}

	// A raw second Bootstrap fails the way Talos does.
	raw := rawClient(t, s.fx.Talosconfig, s.cps[2].Endpoint())

	err = raw.Bootstrap(ctx, &machine.BootstrapRequest{})
	if client.StatusCode(err) != codes.AlreadyExists || !strings.Contains(err.Error(), "etcd data directory is not empty") {
		t.Fatalf("raw second Bootstrap: %v", err)
	}

	members, err := cp0.EtcdMembers(ctx)
	if err != nil {
		t.Fatal(err)
	}

	var names []string

	for _, m := range members {
		if m.Learner || len(m.PeerURLs) != 1 || !strings.HasPrefix(m.PeerURLs[0], "https://10.0.1.") {
			t.Errorf("unexpected member %+v", m)
		}

		names = append(names, m.Name)
	}

	if want := []string{"sbx-node-0", "sbx-node-1", "sbx-node-2"}; !slices.Equal(names, want) {
		t.Fatalf("members = %v, want %v", names, want)
	}

	checkKubeconfig(ctx, t, cp0, s.cps[0])
	checkLinks(ctx, t, cp0, s)

	// The worker serves the Talos API but no control-plane-only calls.
	wk := connect(t, s.fx.Talosconfig, s.wk)

	if _, err := wk.Kubeconfig(ctx); client.StatusCode(err) != codes.Unimplemented {
		t.Fatalf("Kubeconfig on worker: %v", err)
	}

	if did, err := wk.BootstrapOnce(ctx); err == nil || did {
		t.Fatalf("BootstrapOnce on worker = %v, %v; want an error", did, err)
	}

	var snap bytes.Buffer

	n, err := cp0.EtcdSnapshot(ctx, &snap)
	if err != nil || n != int64(snap.Len()) || n < 4096 {
		t.Fatalf("EtcdSnapshot = %d, %v (buffer %d)", n, err, snap.Len())
	}

	body := snap.Bytes()[:snap.Len()-sha256.Size]
	if sum := sha256.Sum256(body); !bytes.Equal(sum[:], snap.Bytes()[snap.Len()-sha256.Size:]) {
		t.Fatal("snapshot trailer is not the SHA-256 of its body")
	}
}

func checkKubeconfig(ctx context.Context, t *testing.T, c *talosapi.Client, bootstrapped *talosfake.Node) {
	t.Helper()

	kc, err := c.Kubeconfig(ctx)
	if err != nil {
		t.Fatal(err)
	}

	var doc struct {
		Kind     string `yaml:"kind"`
		Clusters []struct {
			Cluster struct {
				Server string `yaml:"server"`
				CA     string `yaml:"certificate-authority-data"`
			} `yaml:"cluster"`
		} `yaml:"clusters"`
		Users []struct {
			User struct {
				Cert string `yaml:"client-certificate-data"`
				Key  string `yaml:"client-key-data"`
			} `yaml:"user"`
		} `yaml:"users"`
		CurrentContext string `yaml:"current-context"`
	}

	if err := yaml.Unmarshal(kc, &doc); err != nil {
		t.Fatalf("kubeconfig does not parse: %v", err)
	}

	// Talos writes the machine config's cluster endpoint (the fixture's
	// VIP), not the address the client dialled.
	host := "10.0.1.100"
	_ = bootstrapped

	if doc.Kind != "Config" || len(doc.Clusters) != 1 || len(doc.Users) != 1 || doc.CurrentContext != "admin@sbx" ||
		doc.Clusters[0].Cluster.Server != "https://"+host+":6443" {
		t.Fatalf("unexpected kubeconfig:\n%s", kc)
	}

	for _, field := range []string{doc.Clusters[0].Cluster.CA, doc.Users[0].User.Cert, doc.Users[0].User.Key} {
		pemBytes, err := base64.StdEncoding.DecodeString(field)
		if err != nil || !bytes.HasPrefix(pemBytes, []byte("-----BEGIN")) {
			t.Fatalf("kubeconfig field is not base64 PEM: %v", err)
		}
	}
}

func checkLinks(ctx context.Context, t *testing.T, c *talosapi.Client, s *sandbox) {
	t.Helper()

	links, err := c.Links(ctx)
	if err != nil {
		t.Fatal(err)
	}

	var names []string

	for _, l := range links {
		names = append(names, l.Name)

		if !l.Up || l.MTU == 0 {
			t.Errorf("link %+v should be up with an MTU", l)
		}
	}

	slices.Sort(names)

	if want := []string{"eth0", "eth1", "lo"}; !slices.Equal(names, want) {
		t.Fatalf("links = %v, want %v", names, want)
	}

	addrs, err := c.Addresses(ctx)
	if err != nil {
		t.Fatal(err)
	}

	want := map[string]bool{
		"eth0/" + s.ipPfx + "10/32": false,
		"eth1/10.0.1.10/32":         false,
	}

	for _, a := range addrs {
		if _, ok := want[a.Link+"/"+a.CIDR]; ok {
			want[a.Link+"/"+a.CIDR] = true
		}
	}

	for k, found := range want {
		if !found {
			t.Errorf("address %s missing from %+v", k, addrs)
		}
	}
}

func rawClient(t *testing.T, talosconfig []byte, endpoint string) *client.Client {
	t.Helper()

	cfg, err := clientconfig.FromBytes(talosconfig)
	if err != nil {
		t.Fatal(err)
	}

	c, err := client.New(t.Context(), client.WithConfig(cfg), client.WithEndpoints(endpoint))
	if err != nil {
		t.Fatal(err)
	}

	t.Cleanup(func() { _ = c.Close() })

	return c
}

func TestForeignTalosconfigFailsFast(t *testing.T) {
	t.Parallel()

	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()

	s := startSandbox(t, "eth1")

	other, err := fixture.New("other", fixture.Options{})
	if err != nil {
		t.Fatal(err)
	}

	c := connect(t, other.Talosconfig, s.cps[0])

	start := time.Now()
	err = c.WaitReady(ctx)

	if !errors.Is(err, talosapi.ErrTrust) || talosapi.IsRetryable(err) {
		t.Fatalf("WaitReady with a foreign talosconfig: want ErrTrust, got %v", err)
	}

	if !strings.Contains(err.Error(), "secrets bundle") || !strings.Contains(err.Error(), "x509") {
		t.Fatalf("error should say what to fix and why: %v", err)
	}

	if time.Since(start) > 15*time.Second {
		t.Fatalf("WaitReady took %s to give up on a TLS failure", time.Since(start))
	}
}
