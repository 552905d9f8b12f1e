package hcloudfake_test

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/hetznercloud/hcloud-go/v2/hcloud"
	"golang.org/x/crypto/ssh"

	"github.com/ohmytalos/ohmytalos/internal/sandbox/hcloudfake"
)

const token = "sandbox-token"

// env is a fake behind a loopback HTTP server and a real hcloud-go client.
type env struct {
	fake   *hcloudfake.Fake
	client *hcloud.Client
	url    string
}

func newEnv(t *testing.T, opts hcloudfake.Options, clientOpts ...hcloud.ClientOption) *env {
	t.Helper()
	if opts.Token == "" {
		opts.Token = token
	}
	f := hcloudfake.New(opts)
	srv := httptest.NewServer(f)
	t.Cleanup(srv.Close)
	base := []hcloud.ClientOption{
		hcloud.WithEndpoint(srv.URL),
		hcloud.WithToken(token),
		hcloud.WithPollOpts(hcloud.PollOpts{BackoffFunc: hcloud.ConstantBackoff(2 * time.Millisecond)}),
		hcloud.WithRetryOpts(hcloud.RetryOpts{BackoffFunc: hcloud.ConstantBackoff(time.Millisecond), MaxRetries: 5}),
	}
	return &env{fake: f, client: hcloud.NewClient(append(base, clientOpts...)...), url: srv.URL}
}

func ctx(t *testing.T) context.Context {
	t.Helper()
	c, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	t.Cleanup(cancel)
	return c
}

// newPlainEnv is newEnv with default options; it returns the client too.
func newPlainEnv(t *testing.T) (*env, *hcloud.Client) {
	t.Helper()
	e := newEnv(t, hcloudfake.Options{})
	return e, e.client
}

// newServer creates a running server and waits for it.
func (e *env) newServer(t *testing.T, opts hcloud.ServerCreateOpts) *hcloud.Server {
	t.Helper()
	if opts.ServerType == nil {
		opts.ServerType = &hcloud.ServerType{Name: "cx23"}
	}
	if opts.Image == nil {
		opts.Image = &hcloud.Image{Name: "debian-12"}
	}
	if opts.Location == nil {
		opts.Location = &hcloud.Location{Name: "fsn1"}
	}
	res, _, err := e.client.Server.Create(ctx(t), opts)
	if err != nil {
		t.Fatalf("create server %s: %v", opts.Name, err)
	}
	e.wait(t, append([]*hcloud.Action{res.Action}, res.NextActions...)...)
	return res.Server
}

// newNetworkEnv is newPlainEnv plus network "n" on 10.0.0.0/16 with one
// cloud subnet in eu-central.
func newNetworkEnv(t *testing.T, subnet string) (*env, *hcloud.Client, *hcloud.Network) {
	t.Helper()
	e, c := newPlainEnv(t)
	network, _, err := c.Network.Create(ctx(t), hcloud.NetworkCreateOpts{Name: "n", IPRange: mustCIDR(t, "10.0.0.0/16"),
		Subnets: []hcloud.NetworkSubnet{{Type: hcloud.NetworkSubnetTypeCloud, IPRange: mustCIDR(t, subnet), NetworkZone: hcloud.NetworkZoneEUCentral}}})
	if err != nil {
		t.Fatalf("create network: %v", err)
	}
	return e, c, network
}

// wait waits for actions and fails the test on error.
func (e *env) wait(t *testing.T, actions ...*hcloud.Action) {
	t.Helper()
	if err := e.client.Action.WaitFor(ctx(t), actions...); err != nil {
		t.Fatalf("wait for actions: %v", err)
	}
}

// clock is a settable test clock.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func newClock() *clock { return &clock{now: time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)} }

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *clock) Add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// recorder records hook calls.
type recorder struct {
	mu     sync.Mutex
	events []string
	on     []hcloudfake.ServerInfo
}

func (r *recorder) ServerPoweredOn(s hcloudfake.ServerInfo) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.events = append(r.events, "on:"+s.Name)
	r.on = append(r.on, s)
}

func (r *recorder) ServerPoweredOff(id int64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.events = append(r.events, "off")
}

func (r *recorder) ServerDeleted(id int64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.events = append(r.events, "deleted")
}

func (r *recorder) snapshot() ([]string, []hcloudfake.ServerInfo) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.events...), append([]hcloudfake.ServerInfo(nil), r.on...)
}

// newPublicKey returns a fresh ed25519 public key in authorized_keys format.
func newPublicKey(t *testing.T) (string, ssh.PublicKey) {
	t.Helper()
	pub, _, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	sp, err := ssh.NewPublicKey(pub)
	if err != nil {
		t.Fatal(err)
	}
	return string(ssh.MarshalAuthorizedKey(sp)), sp
}

func ptr[T any](v T) *T { return &v }

// newTCPLoadBalancer creates the load balancer "lb" (lb11 in fsn1) with one
// TCP service from listen to dest, health-checked on dest.
func (e *env) newTCPLoadBalancer(t *testing.T, listen, dest int) *hcloud.LoadBalancer {
	t.Helper()
	res, _, err := e.client.LoadBalancer.Create(ctx(t), hcloud.LoadBalancerCreateOpts{Name: "lb",
		LoadBalancerType: &hcloud.LoadBalancerType{Name: "lb11"}, Location: &hcloud.Location{Name: "fsn1"}})
	if err != nil {
		t.Fatal(err)
	}
	lb := res.LoadBalancer
	if _, _, err := e.client.LoadBalancer.AddService(ctx(t), lb, hcloud.LoadBalancerAddServiceOpts{Protocol: hcloud.LoadBalancerServiceProtocolTCP,
		ListenPort: hcloud.Ptr(listen), DestinationPort: hcloud.Ptr(dest), Proxyprotocol: hcloud.Ptr(false), HealthCheck: tcpCheck(dest)}); err != nil {
		t.Fatal(err)
	}
	return lb
}
