package hcloudfake

import (
	"fmt"
	"maps"
	"net"
	"net/http"
	"slices"
	"strconv"
	"time"

	"github.com/hetznercloud/hcloud-go/v2/hcloud/schema"
)

// toTarget converts a target request into the stored form of a target.
func toTarget(r schema.LoadBalancerActionAddTargetRequest) schema.LoadBalancerTarget {
	t := schema.LoadBalancerTarget{Type: r.Type, UsePrivateIP: r.UsePrivateIP != nil && *r.UsePrivateIP}
	if r.Server != nil {
		t.Server = &schema.LoadBalancerTargetServer{ID: r.Server.ID}
	}
	if r.LabelSelector != nil {
		t.LabelSelector = &schema.LoadBalancerTargetLabelSelector{Selector: r.LabelSelector.Selector}
	}
	if r.IP != nil {
		t.IP = &schema.LoadBalancerTargetIP{IP: r.IP.IP}
	}
	return t
}

// addTarget validates and stores a target.
func (f *Fake) addTarget(lb *schema.LoadBalancer, t schema.LoadBalancerTarget) error {
	switch t.Type {
	case "server":
		if t.Server == nil {
			return errInvalid("server", "a server target needs server.id")
		}
		ss, ok := f.servers[t.Server.ID]
		if !ok {
			return errInvalid("server", fmt.Sprintf("server %d not found", t.Server.ID))
		}
		if t.UsePrivateIP && !f.sharesNetwork(lb, ss) {
			return errCode(http.StatusUnprocessableEntity, "server_not_attached_to_network",
				fmt.Sprintf("server %d is not attached to the load balancer's network", t.Server.ID))
		}
	case "label_selector":
		if t.LabelSelector == nil {
			return errInvalid("label_selector", "a label_selector target needs label_selector.selector")
		}
		if _, err := parseSelector(t.LabelSelector.Selector); err != nil {
			return errInvalid("label_selector", err.Error())
		}
	case "ip":
		if t.IP == nil {
			return errInvalid("ip", "an ip target needs ip.ip")
		}
	default:
		return errInvalid("type", fmt.Sprintf("target type %q is not one of server, label_selector, ip", t.Type))
	}
	if t.UsePrivateIP && len(lb.PrivateNet) == 0 {
		return errCode(http.StatusUnprocessableEntity, "load_balancer_not_attached_to_network",
			"use_private_ip needs the load balancer attached to a network; attach it first")
	}
	if slices.ContainsFunc(lb.Targets, func(x schema.LoadBalancerTarget) bool { return sameTarget(x, t) }) {
		return errCode(http.StatusUnprocessableEntity, "target_already_defined", "this target is already defined on the load balancer")
	}
	if len(lb.Targets) >= lb.LoadBalancerType.MaxTargets {
		return errCode(http.StatusForbidden, "resource_limit_exceeded", fmt.Sprintf("%s allows at most %d targets", lb.LoadBalancerType.Name, lb.LoadBalancerType.MaxTargets))
	}
	f.targetAdded[targetKey(lb.ID, t)] = f.opts.Now()
	lb.Targets = append(lb.Targets, schema.LoadBalancerTarget{Type: t.Type, Server: t.Server, LabelSelector: t.LabelSelector, IP: t.IP, UsePrivateIP: t.UsePrivateIP})
	return nil
}

func sameTarget(a, b schema.LoadBalancerTarget) bool {
	if a.Type != b.Type {
		return false
	}
	switch a.Type {
	case "server":
		return a.Server != nil && b.Server != nil && a.Server.ID == b.Server.ID
	case "label_selector":
		return a.LabelSelector != nil && b.LabelSelector != nil && a.LabelSelector.Selector == b.LabelSelector.Selector
	case "ip":
		return a.IP != nil && b.IP != nil && a.IP.IP == b.IP.IP
	}
	return false
}

func (f *Fake) sharesNetwork(lb *schema.LoadBalancer, ss *serverState) bool {
	for _, ln := range lb.PrivateNet {
		for _, sn := range ss.s.PrivateNet {
			if ln.Network == sn.Network {
				return true
			}
		}
	}
	return false
}

// health reports one health status per service of a target server. Like
// Hetzner's health checks, it asks whether something answers on the
// check's port at the server's address (in the sandbox, the public
// loopback IPv4, also for use_private_ip targets): "unknown" until the
// first check interval after the target appeared, then "healthy" or
// "unhealthy"; a server that is not running is unhealthy.
func (f *Fake) health(lb *schema.LoadBalancer, serverID int64, since time.Time) []schema.LoadBalancerTargetHealthStatus {
	out := []schema.LoadBalancerTargetHealthStatus{}
	ss, ok := f.servers[serverID]
	if ok && ss.s.Created.After(since) {
		since = ss.s.Created
	}
	now := f.opts.Now()
	for _, s := range lb.Services {
		status := "unhealthy"
		switch {
		case !ok || ss.s.Status != "running":
		case now.Before(since.Add(f.firstHealthCheck(s.HealthCheck.Interval))):
			status = "unknown"
		case f.answers(ss.s.PublicNet.IPv4.IP, s.HealthCheck.Port, now):
			status = "healthy"
		}
		out = append(out, schema.LoadBalancerTargetHealthStatus{ListenPort: s.ListenPort, Status: status})
	}
	return out
}

// firstHealthCheck is how long a new target's status stays "unknown" for a
// check of interval seconds (Options.FirstHealthCheck).
func (f *Fake) firstHealthCheck(interval int) time.Duration {
	d := time.Duration(interval) * time.Second
	if f.opts.FirstHealthCheck != nil {
		return f.opts.FirstHealthCheck(d)
	}
	return d
}

// probeTTL is how long a health probe's result is reused, probeTimeout how
// long a probe waits for a TCP connection.
const (
	probeTTL     = time.Second
	probeTimeout = 150 * time.Millisecond
)

// probe is a cached health probe result.
type probe struct {
	at time.Time
	ok bool
}

// answers reports whether a TCP connection to ip:port succeeds, probing at
// most once per probeTTL; callers hold f.mu.
func (f *Fake) answers(ip string, port int, now time.Time) bool {
	if ip == "" {
		return false
	}
	addr := net.JoinHostPort(ip, strconv.Itoa(port))
	if p, ok := f.probes[addr]; ok && now.Sub(p.at) < probeTTL && !now.Before(p.at) {
		return p.ok
	}
	conn, err := net.DialTimeout("tcp", addr, probeTimeout)
	if err == nil {
		_ = conn.Close()
	}
	f.probes[addr] = probe{at: now, ok: err == nil}
	return err == nil
}

// resolveTargets returns the server targets a load balancer balances to:
// direct server targets and the servers its label selectors match (with
// use_private_ip, only servers in one of the load balancer's networks).
func (f *Fake) resolveTargets(lb *schema.LoadBalancer) []schema.LoadBalancerTarget {
	var out []schema.LoadBalancerTarget
	for _, t := range lb.Targets {
		switch t.Type {
		case "server":
			out = append(out, t)
		case "label_selector":
			out = append(out, f.selectorTargets(lb, t)...)
		}
	}
	return out
}

func (f *Fake) selectorTargets(lb *schema.LoadBalancer, t schema.LoadBalancerTarget) []schema.LoadBalancerTarget {
	sel, err := parseSelector(t.LabelSelector.Selector)
	if err != nil {
		return nil
	}
	var out []schema.LoadBalancerTarget
	for _, sid := range slices.Sorted(maps.Keys(f.servers)) {
		ss := f.servers[sid]
		if !sel.matches(ss.s.Labels) || (t.UsePrivateIP && !f.sharesNetwork(lb, ss)) {
			continue
		}
		out = append(out, schema.LoadBalancerTarget{Type: "server", Server: &schema.LoadBalancerTargetServer{ID: sid},
			UsePrivateIP: t.UsePrivateIP, HealthStatus: f.health(lb, sid, f.targetSince(lb.ID, t))})
	}
	return out
}

// renderLB resolves label selector targets and health statuses, in the
// API's JSON form.
func (f *Fake) renderLB(lb *schema.LoadBalancer) lbJSON {
	out := *lb
	out.Labels = maps.Clone(lb.Labels)
	out.PrivateNet = slices.Clone(lb.PrivateNet)
	out.Services = slices.Clone(lb.Services)
	out.Targets = []schema.LoadBalancerTarget{}
	for _, t := range lb.Targets {
		switch t.Type {
		case "server":
			t.HealthStatus = f.health(lb, t.Server.ID, f.targetSince(lb.ID, t))
		case "label_selector":
			t.Targets = f.selectorTargets(lb, t)
			if t.Targets == nil {
				t.Targets = []schema.LoadBalancerTarget{}
			}
		case "ip":
			t.HealthStatus = []schema.LoadBalancerTargetHealthStatus{}
		}
		out.Targets = append(out.Targets, t)
	}
	return lbWire(out)
}

// targetKey names a target of a load balancer for targetAdded.
func targetKey(lbID int64, t schema.LoadBalancerTarget) string {
	switch {
	case t.Server != nil:
		return fmt.Sprintf("%d/server/%d", lbID, t.Server.ID)
	case t.LabelSelector != nil:
		return fmt.Sprintf("%d/label_selector/%s", lbID, t.LabelSelector.Selector)
	case t.IP != nil:
		return fmt.Sprintf("%d/ip/%s", lbID, t.IP.IP)
	}
	return fmt.Sprintf("%d/%s", lbID, t.Type)
}

// targetSince is when a target was added to the load balancer.
func (f *Fake) targetSince(lbID int64, t schema.LoadBalancerTarget) time.Time {
	return f.targetAdded[targetKey(lbID, t)]
}
