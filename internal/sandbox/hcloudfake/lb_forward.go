package hcloudfake

import (
	"fmt"
	"io"
	"net"
	"strconv"
	"sync"
	"time"

	"github.com/hetznercloud/hcloud-go/v2/hcloud/schema"
)

// SandboxListenPort is where the sandbox binds a load balancer service's
// listen port on the load balancer's loopback address: ports below 1024
// need privileges, so 80 is served on 8080 and 443 on 8443 (as rescue
// SSH is on 2222); other ports are kept.
func SandboxListenPort(port int) int {
	if port < 1024 {
		return port + 8000
	}
	return port
}

// forwarder is one load balancer service's listener.
type forwarder struct {
	ln   net.Listener
	addr string
	done sync.WaitGroup
}

func (f *Fake) lbListenPort(port int) int {
	if f.opts.LBListenPort != nil {
		return f.opts.LBListenPort(port)
	}
	return SandboxListenPort(port)
}

// ListenAddr is the sandbox address (host:port) on which load balancer
// name serves its service on listenPort: its public IPv4 and the mapped
// port (Options.LBListenPort), or the port its listener bound.
func (f *Fake) ListenAddr(name string, listenPort int) (string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, lb := range f.lbs {
		if lb.Name != name {
			continue
		}
		if fw, ok := f.forwarders[fmt.Sprintf("%d/%d", lb.ID, listenPort)]; ok {
			return fw.ln.Addr().String(), nil
		}
		if !lb.PublicNet.Enabled || lb.PublicNet.IPv4.IP == "" {
			return "", fmt.Errorf("load balancer %s has no public IPv4", name)
		}
		return net.JoinHostPort(lb.PublicNet.IPv4.IP, strconv.Itoa(f.lbListenPort(listenPort))), nil
	}
	return "", fmt.Errorf("no load balancer named %s", name)
}

// syncForwarders starts a listener for every service of a load balancer
// with a public IPv4 and stops those whose service or load balancer is
// gone; callers hold f.mu. A port that cannot be bound is tried again
// after the next request.
func (f *Fake) syncForwarders() {
	if !f.opts.ForwardLoadBalancers {
		return
	}
	want := map[string]string{}
	for _, lb := range f.lbs {
		if !lb.PublicNet.Enabled || lb.PublicNet.IPv4.IP == "" {
			continue
		}
		for _, s := range lb.Services {
			if s.Protocol != "tcp" {
				continue // http and https terminate on the load balancer: not modelled
			}
			want[fmt.Sprintf("%d/%d", lb.ID, s.ListenPort)] = net.JoinHostPort(lb.PublicNet.IPv4.IP, strconv.Itoa(f.lbListenPort(s.ListenPort)))
		}
	}
	for key, fw := range f.forwarders {
		if want[key] != fw.addr {
			_ = fw.ln.Close()
			delete(f.forwarders, key)
		}
	}
	for key, addr := range want {
		if _, ok := f.forwarders[key]; ok {
			continue
		}
		ln, err := net.Listen("tcp", addr)
		if err != nil {
			continue
		}
		var id int64
		var port int
		_, _ = fmt.Sscanf(key, "%d/%d", &id, &port)
		fw := &forwarder{ln: ln, addr: addr}
		f.forwarders[key] = fw
		fw.done.Add(1)
		go f.serveForwarder(fw, id, port)
	}
}

// Close stops the load balancers' listeners.
func (f *Fake) Close() {
	f.mu.Lock()
	fws := f.forwarders
	f.forwarders = map[string]*forwarder{}
	f.mu.Unlock()
	for _, fw := range fws {
		_ = fw.ln.Close()
		fw.done.Wait()
	}
}

func (f *Fake) serveForwarder(fw *forwarder, lbID int64, port int) {
	defer fw.done.Done()
	for {
		conn, err := fw.ln.Accept()
		if err != nil {
			return
		}
		go f.forward(conn, lbID, port)
	}
}

// forward relays conn to a healthy target of the service on port. With no
// healthy target the load balancer accepts and closes the connection:
// clients see an empty reply (field notes, pitfall 3). With proxyprotocol
// the target first gets a PROXY protocol v1 header
// (https://www.haproxy.org/download/2.9/doc/proxy-protocol.txt, 2.1).
func (f *Fake) forward(conn net.Conn, lbID int64, port int) {
	defer conn.Close()
	dest, proxy, ok := f.pickTarget(lbID, port)
	if !ok {
		return
	}
	up, err := net.DialTimeout("tcp", dest, 2*time.Second)
	if err != nil {
		return
	}
	defer up.Close()
	if proxy {
		src, _ := conn.RemoteAddr().(*net.TCPAddr)
		dst, _ := conn.LocalAddr().(*net.TCPAddr)
		if src != nil && dst != nil {
			if _, err := fmt.Fprintf(up, "PROXY TCP4 %s %s %d %d\r\n", src.IP, dst.IP, src.Port, port); err != nil {
				return
			}
		}
	}
	done := make(chan struct{}, 2)
	go func() { _, _ = io.Copy(up, conn); closeWrite(up); done <- struct{}{} }()
	go func() { _, _ = io.Copy(conn, up); closeWrite(conn); done <- struct{}{} }()
	<-done
	<-done
}

func closeWrite(c net.Conn) {
	if tc, ok := c.(*net.TCPConn); ok {
		_ = tc.CloseWrite()
	}
}

// pickTarget chooses, round robin, a target whose health check of the
// service on port passes, and returns the address to dial: the server's
// public loopback IPv4 (the sandbox's stand-in for its private IP) and
// the service's destination port.
func (f *Fake) pickTarget(lbID int64, port int) (dest string, proxy, ok bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	lb, found := f.lbs[lbID]
	if !found {
		return "", false, false
	}
	var svc *schema.LoadBalancerService
	for i := range lb.Services {
		if lb.Services[i].ListenPort == port {
			svc = &lb.Services[i]
		}
	}
	if svc == nil {
		return "", false, false
	}
	var healthy []string
	for _, t := range f.resolveTargets(lb) {
		if t.Server == nil {
			continue
		}
		hs := t.HealthStatus
		if hs == nil {
			hs = f.health(lb, t.Server.ID, f.targetSince(lb.ID, t))
		}
		ss := f.servers[t.Server.ID]
		for _, h := range hs {
			if h.ListenPort == port && h.Status == "healthy" && ss != nil {
				healthy = append(healthy, net.JoinHostPort(ss.s.PublicNet.IPv4.IP, strconv.Itoa(svc.DestinationPort)))
			}
		}
	}
	if len(healthy) == 0 {
		return "", false, false
	}
	key := fmt.Sprintf("%d/%d", lbID, port)
	i := f.rr[key] % len(healthy)
	f.rr[key]++
	return healthy[i], svc.Proxyprotocol, true
}
