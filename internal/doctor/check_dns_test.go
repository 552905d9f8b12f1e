package doctor

import (
	"context"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/miekg/dns"
)

// fakeDNS is an authoritative DNS server on 127.0.0.1 answering from a map
// of "name TYPE" to record strings in zone-file syntax.
type fakeDNS struct {
	mu      sync.Mutex
	records map[string][]string
	addr    string
}

func startDNS(t *testing.T, records map[string][]string) *fakeDNS {
	t.Helper()
	f := &fakeDNS{records: records}
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	f.addr = pc.LocalAddr().String()
	started := make(chan struct{})
	srv := &dns.Server{PacketConn: pc, Handler: dns.HandlerFunc(f.serve), NotifyStartedFunc: func() { close(started) }}
	go func() { _ = srv.ActivateAndServe() }()
	<-started
	t.Cleanup(func() { _ = srv.Shutdown() })
	return f
}

func (f *fakeDNS) set(key string, rrs ...string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.records[key] = rrs
}

func (f *fakeDNS) serve(w dns.ResponseWriter, req *dns.Msg) {
	m := new(dns.Msg)
	m.SetReply(req)
	m.Authoritative = true
	q := req.Question[0]
	f.mu.Lock()
	recs := f.records[strings.TrimSuffix(q.Name, ".")+" "+dns.TypeToString[q.Qtype]]
	f.mu.Unlock()
	for _, s := range recs {
		rr, err := dns.NewRR(q.Name + " 300 IN " + dns.TypeToString[q.Qtype] + " " + s)
		if err == nil {
			m.Answer = append(m.Answer, rr)
		}
	}
	_ = w.WriteMsg(m)
}

// listenV6 opens a TCP listener on [::1], or skips the test when the host
// has no IPv6 loopback.
func listenV6(t *testing.T) net.Listener {
	t.Helper()
	l, err := net.Listen("tcp6", "[::1]:0")
	if err != nil {
		t.Skipf("no IPv6 loopback on this host: %v", err)
	}
	acceptAll(t, l, func(c net.Conn) { _ = c.Close() })
	return l
}

// acceptAll hands every connection l accepts to handle, until l is closed
// at the end of the test.
func acceptAll(t *testing.T, l net.Listener, handle func(net.Conn)) {
	t.Cleanup(func() { _ = l.Close() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			handle(c)
		}
	}()
}

// portDialer sends connections for ports 80 and 443 to the given local
// ports, so the probes reach test listeners instead of privileged ports.
func portDialer(ports map[string]string) func(ctx context.Context, network, addr string) (net.Conn, error) {
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		host, port, err := net.SplitHostPort(addr)
		if err != nil {
			return nil, err
		}
		if p, ok := ports[port]; ok {
			port = p
		}
		var d net.Dialer
		return d.DialContext(ctx, network, net.JoinHostPort(host, port))
	}
}

func portOf(l net.Listener) string {
	_, p, _ := net.SplitHostPort(l.Addr().String())
	return p
}

func TestDNSIPv6NoAAAA(t *testing.T) {
	f := startDNS(t, map[string][]string{"app.example.com A": {"203.0.113.10"}})
	env := &Env{Domains: []string{"app.example.com"}, Resolver: f.addr}
	expect(t, checkDNSIPv6(context.Background(), env), StatusPass, "app.example.com: A 203.0.113.10, AAAA none")
}

func TestDNSIPv6Listeners(t *testing.T) {
	l80, l443 := listenV6(t), listenV6(t)
	f := startDNS(t, map[string][]string{"app.example.com A": {"203.0.113.10"}, "app.example.com AAAA": {"::1"}})
	env := &Env{Domains: []string{"app.example.com"}, Resolver: f.addr,
		Dialer: portDialer(map[string]string{"80": portOf(l80), "443": portOf(l443)})}
	expect(t, checkDNSIPv6(context.Background(), env), StatusPass, "app.example.com: A 203.0.113.10, AAAA ::1", "[::1]:80 accepts connections", "[::1]:443 accepts connections")

	// Nothing listens on 443 any more: Let's Encrypt's IPv6-first attempt fails.
	closed := portOf(l443)
	_ = l443.Close()
	env.Dialer = portDialer(map[string]string{"80": portOf(l80), "443": closed})
	expect(t, checkDNSIPv6(context.Background(), env), StatusFail, "app.example.com: nothing accepts connections on [::1]:443", "Let's Encrypt tries IPv6 first", "remove the AAAA records")
}

// An AAAA record where ohmytalos planned none is named; whether it fails
// is still the probe's call.
func TestDNSIPv6AgainstTheIngressPlan(t *testing.T) {
	l80, l443 := listenV6(t), listenV6(t)
	f := startDNS(t, map[string][]string{"app.example.com A": {"203.0.113.10"}, "app.example.com AAAA": {"::1"}})
	v4only := false
	env := &Env{Domains: []string{"app.example.com"}, Resolver: f.addr, IngressIPv6: &v4only,
		Dialer: portDialer(map[string]string{"80": portOf(l80), "443": portOf(l443)})}
	expect(t, checkDNSIPv6(context.Background(), env), StatusPass, "app.example.com: has an AAAA record, yet ohmytalos set the ingress up for IPv4 only")
	v6 := true
	env.IngressIPv6 = &v6
	if r := checkDNSIPv6(context.Background(), env); strings.Contains(strings.Join(r.Evidence, "\n"), "IPv4 only") {
		t.Errorf("an ingress with IPv6 is named IPv4 only: %v", r.Evidence)
	}
}

func TestDNSUnreachableResolver(t *testing.T) {
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := pc.LocalAddr().String()
	_ = pc.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer cancel()
	r := checkDNSIPv6(ctx, &Env{Domains: []string{"app.example.com"}, Resolver: addr})
	expect(t, r, StatusError, "could not read DNS")
}

func TestExternalDNSOwner(t *testing.T) {
	f := startDNS(t, map[string][]string{
		"app.example.com TXT":   {`"heritage=external-dns,external-dns/owner=prod,external-dns/resource=service/traefik/traefik"`},
		"a-app.example.com TXT": {`"heritage=external-dns,external-dns/owner=prod,external-dns/resource=service/traefik/traefik"`},
		"www.example.com TXT":   {`"v=spf1 -all"`},
	})
	env := &Env{Domains: []string{"app.example.com", "www.example.com"}, Resolver: f.addr, ExternalDNSOwner: "prod"}
	expect(t, checkExternalDNSOwner(context.Background(), env), StatusPass, `app.example.com: owner "prod" (TXT at app.example.com, a-app.example.com)`, "www.example.com: no external-dns TXT record")

	f.set("aaaa-www.example.com TXT", `"heritage=external-dns,external-dns/owner=old-cluster"`)
	expect(t, checkExternalDNSOwner(context.Background(), env), StatusFail, `owned by 2 external-dns instances ("old-cluster", "prod")`, "scale the old cluster's external-dns to 0")

	env.ExternalDNSOwner = "new-cluster"
	f.set("aaaa-www.example.com TXT")
	expect(t, checkExternalDNSOwner(context.Background(), env), StatusFail, `owned by "prod", not by this cluster's "new-cluster"`)

	env.Domains = []string{"www.example.com"}
	expect(t, checkExternalDNSOwner(context.Background(), env), StatusWarn, `configured with owner "new-cluster"`)
}
