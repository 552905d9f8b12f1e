package steps

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"slices"
	"strings"

	"github.com/hetznercloud/hcloud-go/v2/hcloud"

	"github.com/ohmytalos/ohmytalos/internal/engine"
	"github.com/ohmytalos/ohmytalos/internal/spec"
)

// dataOperator is the state record of the operator's detected address: the
// firewall admitted exactly these ranges, so a later run that detects
// another address shows a firewall update instead of changing it silently.
const dataOperator = "operator-address"

// operatorData is what dataOperator holds.
type operatorData struct {
	Sources []string `json:"sources"`
}

// fwSources are the ranges the firewall admits to the Talos (50000) and
// Kubernetes (6443) APIs, and where they come from.
type fwSources struct {
	// CIDRs are the source ranges of both rules.
	CIDRs []string
	// Detected is true when CIDRs are the operator's own address (the spec
	// leaves firewall.allow empty), false when the spec lists them.
	Detected bool
	// From names the echo services asked, for messages.
	From string
	// Previous are the ranges recorded by an earlier run, when they differ.
	Previous []string
	// Stale is set when detection failed and the recorded ranges are used.
	Stale error
}

// firewallSources decides what the firewall admits: firewall.allow when the
// spec lists ranges, else the operator's address detected from the echo
// services (IPv4 /32, IPv6 /64). 0.0.0.0/0 appears only when the spec says
// so. When detection fails but an earlier run recorded an address, that
// one is kept (Stale says why): a resumed apply must not fail because an
// echo service is down.
func (d *Deps) firewallSources(ctx context.Context, env *engine.Env) (fwSources, error) {
	sp := env.Spec
	if len(sp.Firewall.Allow) > 0 {
		return fwSources{CIDRs: slices.Clone(sp.Firewall.Allow)}, nil
	}
	urls := d.EchoURLs(sp)
	out := fwSources{Detected: true, From: strings.Join(urls, ", ")}
	var prev operatorData
	if _, err := env.State.GetData(dataOperator, &prev); err != nil {
		return out, err
	}
	a, err := d.OperatorAddress(ctx, urls)
	switch {
	case err != nil && len(prev.Sources) > 0:
		out.CIDRs, out.Stale = prev.Sources, err
		return out, nil
	case err != nil:
		return out, err
	}
	out.CIDRs = a.Sources()
	if len(prev.Sources) > 0 && !sameSet(prev.Sources, out.CIDRs) {
		out.Previous = prev.Sources
	}
	return out, nil
}

// Drift implements engine.Drifter: when the firewall admits the operator's
// detected address and that address changed since the pools step ran, the
// step runs again and sets the rules, although the spec did not change. A
// failed detection is no reason (the recorded address is kept).
func (s *Pools) Drift(ctx context.Context, env *engine.Env) string {
	if why := idDrift(env); why != "" {
		return why
	}
	src, err := s.d.firewallSources(ctx, env)
	if err != nil || src.Previous == nil {
		return ""
	}
	return fmt.Sprintf("your address changed (%s -> %s): the firewall follows", strings.Join(src.Previous, ", "), strings.Join(src.CIDRs, ", "))
}

// record stores detected ranges once the firewall admits them.
func (f fwSources) record(env *engine.Env) error {
	if !f.Detected || f.Stale != nil {
		return nil
	}
	return env.State.PutData(dataOperator, operatorData{Sources: f.CIDRs})
}

// planFirewall adds the firewall to the plan through add (compared with
// Hetzner when c is set): where its sources come from, a changed address as
// an update, and the warnings an operator must read (the internet, load
// balancers that no firewall filters).
func (d *Deps) planFirewall(ctx context.Context, env *engine.Env, p *engine.Plan, c *hcloud.Client,
	add func(item engine.PlanItem, key string, plan func() (engine.PlanItem, error)) error) error {
	sp := env.Spec
	src, err := d.firewallSources(ctx, env)
	if err != nil {
		// Plan stays useful offline (as with prices); apply fails with
		// the same error.
		p.Items = append(p.Items, engine.PlanItem{Action: stateAction(env, keyFirewall), Kind: "firewall", Name: sp.Name, Detail: "50000 and 6443 from your address (not detected yet)"})
		p.Notes = append(p.Notes, "apply will fail: "+err.Error())
		return nil
	}
	item := engine.PlanItem{Kind: "firewall", Name: sp.Name, Detail: "50000 and 6443 from " + strings.Join(src.CIDRs, ", ")}
	if src.Detected {
		item.Detail += " (your address, from " + src.From + ")"
	}
	if src.Previous != nil {
		item.Detail += fmt.Sprintf("; your address changed: %s -> %s", strings.Join(src.Previous, ", "), strings.Join(src.CIDRs, ", "))
	}
	err = add(item, keyFirewall, func() (engine.PlanItem, error) {
		id := env.State.ClusterID()
		return planFirewallItem(ctx, c, env, firewallWant(sp, id, src.CIDRs), item)
	})
	if err != nil {
		return err
	}
	if last := &p.Items[len(p.Items)-1]; c == nil && src.Previous != nil && last.Action == engine.ActionReuse {
		// Not compared with Hetzner, but the recorded rules are not these.
		last.Action = engine.ActionUpdate
	}
	if src.Stale != nil {
		p.Notes = append(p.Notes, fmt.Sprintf("could not detect your address (%v): the firewall keeps %s from the last run", src.Stale, strings.Join(src.CIDRs, ", ")))
	}
	if note := d.lockoutNote(ctx, sp, src); note != "" {
		p.Notes = append(p.Notes, note)
	}
	if sp.OpenToInternet() {
		p.Notes = append(p.Notes, "firewall.allow opens the Talos and Kubernetes APIs to the whole internet (they are mTLS-protected); remove it to admit only your address")
	}
	if sp.Endpoint.Mode == spec.EndpointLoadBalancer {
		p.Notes = append(p.Notes, "endpoint.mode loadbalancer: Hetzner firewalls do not filter load balancers, so the API load balancer forwards 6443 and 50000 from anywhere; firewall.allow protects only the servers' own public addresses")
	}
	return nil
}

// admits reports whether the firewall's rules let ip in: both API rules
// carry the same source ranges (firewallRules), so ip must be inside one
// of them. Pre-flight and apply's lockout refusal ask this one question.
func admits(sources []string, ip netip.Addr) bool {
	return slices.ContainsFunc(sources, func(c string) bool {
		p, err := netip.ParsePrefix(c)
		return err == nil && p.Contains(ip)
	})
}

// lockout is a firewall.allow that does not admit the operator's own
// address: once it is set, ohmytalos on this machine can no longer reach
// the Talos and Kubernetes APIs (the servers drop the connections).
type lockout struct {
	// Outside are the operator's addresses the ranges do not admit.
	Outside []string
	// Admit are the ranges that would admit the operator (IPv4 /32, IPv6 /64).
	Admit []string
	// Allowed are the ranges firewall.allow lists.
	Allowed []string
}

// what says what is wrong, for a note or an error.
func (l *lockout) what() string {
	return fmt.Sprintf("firewall.allow (%s) does not admit your address %s", strings.Join(l.Allowed, ", "), strings.Join(l.Outside, ", "))
}

// fix says how to admit the operator again.
func (l *lockout) fix() string {
	return fmt.Sprintf("add %s to firewall.allow, or remove firewall.allow to admit only your address", strings.Join(l.Admit, ", "))
}

// lockedOut returns the lockout the spec's firewall would cause, or nil
// when it admits the operator, admits the detected address by default, or
// when the address cannot be detected (no reason to refuse or warn).
func (d *Deps) lockedOut(ctx context.Context, sp *spec.Spec, src fwSources) *lockout {
	if src.Detected {
		return nil
	}
	a, err := d.OperatorAddress(ctx, d.EchoURLs(sp))
	if err != nil {
		return nil
	}
	var outside []string
	for _, ip := range []netip.Addr{a.IPv4, a.IPv6} {
		if ip.IsValid() && !admits(src.CIDRs, ip) {
			outside = append(outside, ip.String())
		}
	}
	if len(outside) == 0 {
		return nil
	}
	return &lockout{Outside: outside, Admit: a.Sources(), Allowed: src.CIDRs}
}

// lockoutNote is plan's warning about a lockout.
func (d *Deps) lockoutNote(ctx context.Context, sp *spec.Spec, src fwSources) string {
	l := d.lockedOut(ctx, sp, src)
	if l == nil {
		return ""
	}
	return l.what() + ": after apply this machine cannot reach the Talos and Kubernetes APIs; " + l.fix() +
		" (apply refuses it unless --allow-lockout)"
}

// refuseLockout is apply's check before the firewall is set: a lockout
// is refused unless the operator passed --allow-lockout (Deps.AllowLockout:
// another machine, a VPN or a bastion reaches the nodes).
func (d *Deps) refuseLockout(ctx context.Context, env *engine.Env, src fwSources, emit engine.Emit) error {
	l := d.lockedOut(ctx, env.Spec, src)
	switch {
	case l == nil:
		return nil
	case d.AllowLockout:
		emit(engine.Event{Kind: engine.KindWarning, Resource: "firewall/" + env.Spec.Name,
			Message: l.what() + ": --allow-lockout sets it anyway; this machine will not reach the Talos and Kubernetes APIs"})
		return nil
	}
	return fmt.Errorf("not applied: %s, so after this apply this machine could not reach the Talos and Kubernetes APIs "+
		"(the firewall drops the connections and every later step would wait for nothing): %s; "+
		"or, if another machine or a VPN reaches the nodes, run apply with --allow-lockout", l.what(), l.fix())
}

// unreachableReason explains why this machine cannot reach a node's API
// when the firewall's ranges are the cause, else "".
func (d *Deps) unreachableReason(ctx context.Context, env *engine.Env) string {
	src, err := d.firewallSources(ctx, env)
	if err != nil {
		return ""
	}
	l := d.lockedOut(ctx, env.Spec, src)
	if l == nil {
		return ""
	}
	return "; the firewall is why: " + l.what() + ", so the nodes drop this machine's connections to ports 50000 and 6443: " + l.fix()
}

// firewallRules opens the Talos and Kubernetes APIs to the source ranges.
// Hetzner firewalls filter public traffic only, so the private network
// (and the load balancer's private targets) stay open.
func firewallRules(cidrs []string) []hcloud.FirewallRule {
	var src []net.IPNet
	for _, a := range cidrs {
		if _, n, err := net.ParseCIDR(a); err == nil {
			src = append(src, *n)
		}
	}
	if len(src) == 0 {
		return nil
	}
	rule := func(port, desc string) hcloud.FirewallRule {
		return hcloud.FirewallRule{Direction: hcloud.FirewallRuleDirectionIn, Protocol: hcloud.FirewallRuleProtocolTCP,
			Port: hcloud.Ptr(port), SourceIPs: src, Description: hcloud.Ptr(desc)}
	}
	return []hcloud.FirewallRule{rule("50000", "Talos API"), rule("6443", "Kubernetes API")}
}

func sameSet(a, b []string) bool {
	a, b = slices.Clone(a), slices.Clone(b)
	slices.Sort(a)
	slices.Sort(b)
	return slices.Equal(a, b)
}

// OperatorSources detects the operator's address for the wizard: the
// firewall source ranges (IPv4 /32, IPv6 /64) and the echo services asked.
// The wizard records them in firewall.allow, so plan and apply use exactly
// what the operator saw and confirmed.
func OperatorSources(ctx context.Context, d *Deps, sp *spec.Spec) (sources []string, from string, err error) {
	urls := d.EchoURLs(sp)
	a, err := d.OperatorAddress(ctx, urls)
	if err != nil {
		return nil, strings.Join(urls, ", "), err
	}
	return a.Sources(), strings.Join(urls, ", "), nil
}
