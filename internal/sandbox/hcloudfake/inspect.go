package hcloudfake

import (
	"maps"
	"net/netip"
	"slices"
	"strings"
	"time"

	"github.com/hetznercloud/hcloud-go/v2/hcloud/schema"
)

// InjectStatus makes the next count requests whose method matches (empty
// matches any) and whose path starts with pathPrefix fail with status and the
// error code Hetzner sends for it (429 rate_limit_exceeded, 500 server_error,
// 502 bad_gateway, 503 service_error, 504 timeout, 409 conflict, ...).
func (f *Fake) InjectStatus(method, pathPrefix string, status int, count int) {
	if count <= 0 {
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.injections = append(f.injections, &injection{method: strings.ToUpper(method), prefix: pathPrefix, status: status, count: count})
}

// FailActions makes the next count actions with this command (e.g.
// "create_image") end in status "error" instead of "success".
func (f *Fake) FailActions(command string, count int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.failActions[command] += count
}

// SetUnavailable makes creating servers of serverType in location fail with
// "resource_unavailable", as Hetzner answers when a type is sold out there.
func (f *Fake) SetUnavailable(serverType, location string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.unavailable[[2]string{serverType, location}] = true
}

// SetLatency delays every request whose path starts with pathPrefix by d
// (zero removes the delay). The longest matching prefix wins.
func (f *Fake) SetLatency(pathPrefix string, d time.Duration) {
	f.mu.Lock()
	defer f.mu.Unlock()
	setOrDelete(f.latency, pathPrefix, d)
}

// setOrDelete sets m[k] to v, or deletes k when v is zero or less.
func setOrDelete[K comparable, V int | time.Duration](m map[K]V, k K, v V) {
	if v <= 0 {
		delete(m, k)
		return
	}
	m[k] = v
}

// Stats returns a copy of the request counters.
func (f *Fake) Stats() Stats {
	f.mu.Lock()
	defer f.mu.Unlock()
	s := f.stats
	s.ByRoute = maps.Clone(f.stats.ByRoute)
	s.ByAgent = make(map[string]map[string]int, len(f.stats.ByAgent))
	for k, v := range f.stats.ByAgent {
		s.ByAgent[k] = maps.Clone(v)
	}
	return s
}

// Servers returns the current servers, ordered by ID.
func (f *Fake) Servers() []ServerInfo {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := make([]ServerInfo, 0, len(f.servers))
	for _, id := range slices.Sorted(maps.Keys(f.servers)) {
		out = append(out, f.serverInfo(f.servers[id]))
	}
	return out
}

// FirewallAdmits reports whether a TCP connection from remote to port of
// the server gets through the firewalls applied to it. Hetzner firewalls
// deny inbound by default once applied: with at least one firewall applied,
// only what some inbound rule allows gets through; a server without any
// firewall receives everything.
//
// Rules only allow: inbound traffic no rule allows is dropped, so a firewall
// without rules drops everything (docs.hetzner.com/cloud/firewalls/overview;
// API description, set_firewall_rules: "Pass an empty array to remove all
// rules"). A rule admits the
// connection when it is inbound TCP, its port covers port and one of its
// source_ips contains remote. Unknown servers admit nothing.
func (f *Fake) FirewallAdmits(serverID int64, remote netip.Addr, port int) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	ss, ok := f.servers[serverID]
	if !ok {
		return false
	}
	applied := false
	for _, id := range slices.Sorted(maps.Keys(f.firewalls)) {
		fw := f.firewalls[id]
		if !f.firewallAppliesTo(fw, ss) {
			continue
		}
		applied = true
		if slices.ContainsFunc(fw.Rules, func(r schema.FirewallRule) bool { return ruleAdmits(r, remote, port) }) {
			return true
		}
	}
	return !applied
}

// ruleAdmits reports whether one firewall rule lets a TCP connection from
// remote to port in.
func ruleAdmits(r schema.FirewallRule, remote netip.Addr, port int) bool {
	if r.Direction != "in" || r.Protocol != "tcp" || r.Port == nil {
		return false
	}
	lo, hi, ok := portRange(*r.Port)
	if !ok || port < lo || port > hi {
		return false
	}
	remote = remote.Unmap()
	for _, s := range r.SourceIPs {
		if p, err := netip.ParsePrefix(s); err == nil && p.Contains(remote) {
			return true
		}
	}
	return false
}

// Counts returns the number of resources per kind: "servers", "networks",
// "firewalls", "load_balancers", "placement_groups", "ssh_keys", "images"
// (snapshots only), "volumes" and "primary_ips".
func (f *Fake) Counts() map[string]int {
	f.mu.Lock()
	defer f.mu.Unlock()
	snapshots := 0
	for _, img := range f.images {
		if img.Type == "snapshot" {
			snapshots++
		}
	}
	return map[string]int{
		"servers":          len(f.servers),
		"networks":         len(f.networks),
		"firewalls":        len(f.firewalls),
		"load_balancers":   len(f.lbs),
		"placement_groups": len(f.pgroups),
		"ssh_keys":         len(f.sshKeys),
		"images":           snapshots,
		"volumes":          len(f.volumes),
		"primary_ips":      len(f.primaryIPs),
	}
}
