package hcloudfake_test

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/hetznercloud/hcloud-go/v2/hcloud"

	"github.com/ohmytalos/ohmytalos/internal/sandbox/hcloudfake"
)

// A load balancer service forwards a TCP connection on the load
// balancer's public address to a target that passes its health check,
// and closes it without a reply while no target does.
func TestLoadBalancerForwardsToAHealthyTarget(t *testing.T) {
	clk := newClock()
	e := newEnv(t, hcloudfake.Options{Now: clk.Now, ForwardLoadBalancers: true, LBListenPort: func(int) int { return 0 }})
	t.Cleanup(e.fake.Close)
	c := e.client
	srv := e.newServer(t, hcloud.ServerCreateOpts{Name: "w"})
	backend, err := net.Listen("tcp", net.JoinHostPort(srv.PublicNet.IPv4.IP.String(), "0"))
	if err != nil {
		t.Skipf("cannot listen on the server's loopback address: %v", err)
	}
	defer backend.Close()
	port := backend.Addr().(*net.TCPAddr).Port
	go func() {
		_ = http.Serve(backend, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			fmt.Fprintf(w, "backend %s", r.Host)
		}))
	}()

	lb := e.newTCPLoadBalancer(t, 80, port)
	if _, _, err := c.LoadBalancer.AddServerTarget(ctx(t), lb, hcloud.LoadBalancerAddServerTargetOpts{Server: srv}); err != nil {
		t.Fatal(err)
	}
	addr, err := e.fake.ListenAddr("lb", 80)
	if err != nil {
		t.Fatal(err)
	}
	if host, _, _ := net.SplitHostPort(addr); host != lb.PublicNet.IPv4.IP.String() {
		t.Fatalf("listen address %s is not on the load balancer's public IPv4 %s", addr, lb.PublicNet.IPv4.IP)
	}
	if got := rawGet(t, addr); got != "" {
		t.Fatalf("before the first health check the load balancer answered %q, want an empty reply", got)
	}
	clk.Add(16 * time.Second)
	if got := rawGet(t, addr); !strings.Contains(got, "200 OK") || !strings.Contains(got, "backend "+addr) {
		t.Fatalf("through the load balancer: %q, want the backend's 200", got)
	}
	if _, _, err := c.LoadBalancer.DeleteService(ctx(t), lb, 80); err != nil {
		t.Fatal(err)
	}
	if conn, err := net.DialTimeout("tcp", addr, time.Second); err == nil {
		conn.Close()
		t.Fatalf("%s still accepts connections after the service was deleted", addr)
	}
}

// rawGet sends one HTTP/1.0 request to addr and returns the whole reply
// ("" when the peer closed without one).
func rawGet(t *testing.T, addr string) string {
	t.Helper()
	conn, err := net.DialTimeout("tcp", addr, 2*time.Second)
	if err != nil {
		t.Fatalf("dial %s: %v", addr, err)
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(5 * time.Second))
	if _, err := fmt.Fprintf(conn, "GET / HTTP/1.0\r\nHost: %s\r\n\r\n", addr); err != nil {
		return ""
	}
	b, _ := io.ReadAll(bufio.NewReader(conn))
	return string(b)
}
