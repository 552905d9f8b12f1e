package hcloudfake_test

import (
	"net"
	"strconv"
	"testing"
	"time"

	"github.com/hetznercloud/hcloud-go/v2/hcloud"

	"github.com/ohmytalos/ohmytalos/internal/sandbox/hcloudfake"
)

func tcpCheck(port int) *hcloud.LoadBalancerAddServiceOptsHealthCheck {
	return &hcloud.LoadBalancerAddServiceOptsHealthCheck{Protocol: hcloud.LoadBalancerServiceProtocolTCP, Port: hcloud.Ptr(port),
		Interval: hcloud.Ptr(15 * time.Second), Timeout: hcloud.Ptr(10 * time.Second), Retries: hcloud.Ptr(3)}
}

// A target is unknown until its first check, then healthy exactly while
// something accepts TCP connections on the check port at its address.
func TestLoadBalancerTargetHealthComesFromTheTarget(t *testing.T) {
	clk := newClock()
	e := newEnv(t, hcloudfake.Options{Now: clk.Now})
	c := e.client
	srv := e.newServer(t, hcloud.ServerCreateOpts{Name: "w"})
	ln, err := net.Listen("tcp", net.JoinHostPort(srv.PublicNet.IPv4.IP.String(), "0"))
	if err != nil {
		t.Skipf("cannot listen on the server's loopback address: %v", err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	_ = ln.Close()

	lb := e.newTCPLoadBalancer(t, 443, port)
	if _, _, err := c.LoadBalancer.AddServerTarget(ctx(t), lb, hcloud.LoadBalancerAddServerTargetOpts{Server: srv}); err != nil {
		t.Fatal(err)
	}
	status := func() hcloud.LoadBalancerTargetHealthStatusStatus {
		t.Helper()
		got, _, err := c.LoadBalancer.GetByID(ctx(t), lb.ID)
		if err != nil || len(got.Targets) != 1 || len(got.Targets[0].HealthStatus) != 1 {
			t.Fatalf("get load balancer: %+v, %v", got, err)
		}
		return got.Targets[0].HealthStatus[0].Status
	}
	if s := status(); s != hcloud.LoadBalancerTargetHealthStatusStatusUnknown {
		t.Fatalf("right after adding: %s, want unknown", s)
	}
	clk.Add(16 * time.Second)
	if s := status(); s != hcloud.LoadBalancerTargetHealthStatusStatusUnhealthy {
		t.Fatalf("nothing listens: %s, want unhealthy", s)
	}
	ln, err = net.Listen("tcp", net.JoinHostPort(srv.PublicNet.IPv4.IP.String(), strconv.Itoa(port)))
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	clk.Add(2 * time.Second)
	if s := status(); s != hcloud.LoadBalancerTargetHealthStatusStatusHealthy {
		t.Fatalf("a listener answers: %s, want healthy", s)
	}
	if _, _, err := c.Server.Poweroff(ctx(t), srv); err != nil {
		t.Fatal(err)
	}
	_, _, _ = c.Server.GetByID(ctx(t), srv.ID) // the poweroff finishes
	if s := status(); s != hcloud.LoadBalancerTargetHealthStatusStatusUnhealthy {
		t.Fatalf("server off: %s, want unhealthy", s)
	}
}

// A scaled first check (the sandbox's time model, Options.FirstHealthCheck)
// shortens Hetzner's "unknown" window but keeps it: the target is unknown
// until the scaled interval has passed, then judged by its listener.
func TestScaledFirstHealthCheckStillStartsUnknown(t *testing.T) {
	clk := newClock()
	var asked time.Duration
	e := newEnv(t, hcloudfake.Options{Now: clk.Now, FirstHealthCheck: func(d time.Duration) time.Duration { asked = d; return d / 10 }})
	c := e.client
	srv := e.newServer(t, hcloud.ServerCreateOpts{Name: "w"})
	ln, err := net.Listen("tcp", net.JoinHostPort(srv.PublicNet.IPv4.IP.String(), "0"))
	if err != nil {
		t.Skipf("cannot listen on the server's loopback address: %v", err)
	}
	defer ln.Close()
	lb := e.newTCPLoadBalancer(t, 443, ln.Addr().(*net.TCPAddr).Port)
	if _, _, err := c.LoadBalancer.AddServerTarget(ctx(t), lb, hcloud.LoadBalancerAddServerTargetOpts{Server: srv}); err != nil {
		t.Fatal(err)
	}
	status := func() hcloud.LoadBalancerTargetHealthStatusStatus {
		t.Helper()
		got, _, err := c.LoadBalancer.GetByID(ctx(t), lb.ID)
		if err != nil || len(got.Targets) != 1 || len(got.Targets[0].HealthStatus) != 1 {
			t.Fatalf("get load balancer: %+v, %v", got, err)
		}
		return got.Targets[0].HealthStatus[0].Status
	}
	clk.Add(time.Second)
	if s := status(); s != hcloud.LoadBalancerTargetHealthStatusStatusUnknown {
		t.Fatalf("1 s after adding, before the scaled 1.5 s: %s, want unknown", s)
	}
	if asked != 15*time.Second {
		t.Errorf("the model was asked to scale %s, want the service's 15 s interval", asked)
	}
	clk.Add(time.Second)
	if s := status(); s != hcloud.LoadBalancerTargetHealthStatusStatusHealthy {
		t.Fatalf("past the scaled interval with a listener: %s, want healthy", s)
	}
}
