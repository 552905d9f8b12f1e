package steps

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"slices"
	"strings"

	"github.com/hetznercloud/hcloud-go/v2/hcloud"

	"github.com/ohmytalos/ohmytalos/internal/engine"
	"github.com/ohmytalos/ohmytalos/internal/myip"
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
	// leaves firewall.allow empty): detected, or named with
	// --operator-address or firewall.operatorAddress. False when the spec
	// lists them.
	Detected bool
	// From names where the address comes from (the echo services asked,
	// or the flag or field naming it), for messages.
	From string
	// Previous are the ranges recorded by an earlier run, when they differ.
	Previous []string
	// Stale is set when detection failed and the recorded ranges are used.
	Stale error
}

// operatorAddr is the operator's address, as the default firewall and the
// lockout guard see it.
type operatorAddr struct {
	myip.Operator
	// From names where it comes from, for messages.
	From string
	// Named is true when the operator named it (nothing was detected).
	Named bool
}

// operator is the operator's address: --operator-address
// (Deps.OperatorAddresses), else the spec's firewall.operatorAddress,
// else detected from the echo services (once per process, see
// clients.Set.OperatorAddress). A named address is not detected, so no
// echo service is asked.
func (d *Deps) operator(ctx context.Context, sp *spec.Spec) (operatorAddr, error) {
	for _, named := range []struct{ value, from string }{
		{d.OperatorAddresses, myip.OperatorFlag}, {sp.Firewall.OperatorAddress, myip.OperatorKey},
	} {
		if strings.TrimSpace(named.value) == "" {
			continue
		}
		op, err := myip.ParseOperator(named.value)
		if err != nil {
			return operatorAddr{From: named.from, Named: true}, fmt.Errorf("%s: %w: write your public address or range, e.g. 203.0.113.7 or 2001:db8::/64", named.from, err)
		}
		return operatorAddr{Operator: op, From: named.from, Named: true}, nil
	}
	urls := d.EchoURLs(sp)
	a, err := d.OperatorAddress(ctx, urls)
	return operatorAddr{Operator: a.Operator(), From: strings.Join(urls, ", ")}, err
}

// firewallSources decides what the firewall admits: firewall.allow when the
// spec lists ranges, else the operator's address (named, or detected from
// the echo services: IPv4 /32, IPv6 /64). 0.0.0.0/0 appears only when the
// spec says so. When detection fails but an earlier run recorded an
// address, that one is kept (Stale says why): a resumed apply must not fail
// because an echo service is down.
func (d *Deps) firewallSources(ctx context.Context, env *engine.Env) (fwSources, error) {
	sp := env.Spec
	if len(sp.Firewall.Allow) > 0 {
		return fwSources{CIDRs: slices.Clone(sp.Firewall.Allow)}, nil
	}
	var prev operatorData
	if _, err := env.State.GetData(dataOperator, &prev); err != nil {
		return fwSources{Detected: true}, err
	}
	op, err := d.operator(ctx, sp)
	out := fwSources{Detected: true, From: op.From}
	switch {
	case err != nil && !op.Named && len(prev.Sources) > 0:
		out.CIDRs, out.Stale = prev.Sources, err
		return out, nil
	case err != nil:
		return out, err
	}
	out.CIDRs = op.Sources
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

// covers reports whether the firewall's rules let every address of r in:
// both API rules carry the same source ranges (firewallRules), so r must
// lie inside one of them.
func covers(sources []string, r netip.Prefix) bool {
	return slices.ContainsFunc(sources, func(c string) bool {
		p, err := netip.ParsePrefix(c)
		return err == nil && p.Bits() <= r.Bits() && p.Masked().Contains(r.Addr())
	})
}

// publicFamilies are the address families the servers have public
// addresses of (publicNetwork; both when unset).
func publicFamilies(sp *spec.Spec) (v4, v6 bool) {
	if pub := sp.PublicNetwork; pub != nil {
		return pub.IPv4, pub.IPv6
	}
	return true, true
}

// mustAdmit is which of the operator's ranges (their indexes) the
// firewall has to admit: every one of a family the servers have public
// addresses of. This
// machine, kubectl and talosctl may reach a node over either family, so a
// dual-stack operator must be admitted on both. Pre-flight and apply
// decide through lockedOut, which asks only this, so they cannot disagree.
func mustAdmit(sp *spec.Spec, ranges []netip.Prefix) []int {
	v4, v6 := publicFamilies(sp)
	var out []int
	for i, r := range ranges {
		if (r.Addr().Is4() && v4) || (r.Addr().Is6() && v6) {
			out = append(out, i)
		}
	}
	return out
}

// admitsAnyone reports whether sources admit every address of every
// family the servers have: then no operator, known or not, is locked out.
func admitsAnyone(sp *spec.Spec, sources []string) bool {
	v4, v6 := publicFamilies(sp)
	return (!v4 || covers(sources, netip.MustParsePrefix("0.0.0.0/0"))) &&
		(!v6 || covers(sources, netip.MustParsePrefix("::/0")))
}

// lockout is a firewall that might keep this machine from reaching the
// Talos and Kubernetes APIs once it is set (the servers drop the
// connections): firewall.allow does not admit the operator's address
// (Outside), the address is unknown and firewall.allow might not admit it
// (Unknown), or the address has no family the servers have (Foreign).
type lockout struct {
	// Outside are the operator's addresses the ranges do not admit.
	Outside []string
	// Inside are those they admit (of another family than Outside's: a
	// connection over that family would pass, one over Outside's not).
	Inside []string
	// Admit are the ranges that would admit them (IPv4 /32, IPv6 /64, or
	// the range the operator named).
	Admit []string
	// Allowed are the ranges the firewall admits.
	Allowed []string
	// Unknown is why the operator's address could not be detected.
	Unknown error
	// Foreign are the operator's addresses when none of them has a family
	// the servers' public addresses have.
	Foreign string
}

// field is the spec field to change.
func (l *lockout) field() string {
	if l.Foreign != "" {
		return "publicNetwork"
	}
	return "firewall.allow"
}

// cannot is how sure the lockout is: "cannot", or "might not" when the
// address is unknown or only some of it is admitted.
func (l *lockout) cannot() string {
	if l.Unknown != nil || len(l.Inside) > 0 {
		return "might not"
	}
	return "cannot"
}

// would is cannot for "apply would lock this machine out".
func (l *lockout) would() string {
	if l.cannot() == "cannot" {
		return "would"
	}
	return "might"
}

// unknownCause is why detection failed, without Detect's advice (fix
// gives the advice that applies here).
func (l *lockout) unknownCause() string {
	if de := (*myip.DetectError)(nil); errors.As(l.Unknown, &de) {
		return de.Cause()
	}
	return l.Unknown.Error()
}

// what says what is wrong, for a note or an error.
func (l *lockout) what() string {
	switch {
	case l.Unknown != nil:
		return fmt.Sprintf("your address could not be detected (%s) and firewall.allow (%s) may not admit it", l.unknownCause(), strings.Join(l.Allowed, ", "))
	case l.Foreign != "":
		return fmt.Sprintf("your address %s has no family the servers' public addresses have (publicNetwork)", l.Foreign)
	}
	what := fmt.Sprintf("firewall.allow (%s) does not admit your address %s", strings.Join(l.Allowed, ", "), strings.Join(l.Outside, ", "))
	if len(l.Inside) > 0 {
		what += " (only " + strings.Join(l.Inside, ", ") + ")"
	}
	return what
}

// fix says how to admit the operator again.
func (l *lockout) fix() string {
	switch {
	case l.Unknown != nil:
		return fmt.Sprintf("name your address with %s (or %s in the spec) so that it can be checked, or fix the detection (this machine's internet access, firewall.ipEchoURL)",
			myip.OperatorFlag, myip.OperatorKey)
	case l.Foreign != "":
		return "give the servers a public address of your family (publicNetwork.ipv4 / ipv6), or reach them over Tailscale"
	}
	return fmt.Sprintf("add %s to firewall.allow, or remove firewall.allow to admit only your address", strings.Join(l.Admit, ", "))
}

// lockedOut is the one verdict plan, pre-flight and apply's pools step
// share on the firewall src: the lockout it would cause, or nil when it
// admits every address of the operator's that mustAdmit names. When the
// address cannot be known, a firewall that might exclude it is a lockout
// (Unknown), unless firewall.allow is empty and the address an earlier
// run recorded is kept (src.Stale).
func (d *Deps) lockedOut(ctx context.Context, sp *spec.Spec, src fwSources) *lockout {
	if src.Detected && src.Stale != nil {
		return nil
	}
	op, err := d.operator(ctx, sp)
	if err != nil {
		if admitsAnyone(sp, src.CIDRs) {
			return nil
		}
		return &lockout{Allowed: src.CIDRs, Unknown: err}
	}
	need := mustAdmit(sp, op.Ranges)
	if len(need) == 0 {
		return &lockout{Allowed: src.CIDRs, Foreign: op.String()}
	}
	l := &lockout{Allowed: src.CIDRs}
	for _, i := range need {
		if covers(src.CIDRs, op.Ranges[i]) {
			l.Inside = append(l.Inside, myip.RangeString(op.Ranges[i]))
			continue
		}
		l.Outside = append(l.Outside, myip.RangeString(op.Ranges[i]))
		l.Admit = append(l.Admit, op.Sources[i])
	}
	if len(l.Outside) == 0 {
		return nil
	}
	return l
}

// lockoutNote is plan's warning about a lockout.
func (d *Deps) lockoutNote(ctx context.Context, sp *spec.Spec, src fwSources) string {
	l := d.lockedOut(ctx, sp, src)
	if l == nil {
		return ""
	}
	return l.what() + ": after apply this machine " + l.cannot() + " reach the Talos and Kubernetes APIs; " + l.fix() +
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
			Message: l.what() + ": --allow-lockout sets it anyway; this machine " + l.cannot() + " reach the Talos and Kubernetes APIs"})
		return nil
	}
	return fmt.Errorf("not applied: %s, so after this apply this machine %s reach the Talos and Kubernetes APIs "+
		"(the firewall drops the connections and every later step would wait for nothing): %s; "+
		"or, if another machine or a VPN reaches the nodes, run apply with --allow-lockout", l.what(), l.cannot(), l.fix())
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
	why := "; the firewall is why: "
	if l.Unknown != nil {
		why = "; the firewall may be why: "
	}
	return why + l.what() + ", so the nodes drop this machine's connections to ports 50000 and 6443: " + l.fix()
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

// OperatorSources is the operator's address for the wizard: the firewall
// source ranges (IPv4 /32, IPv6 /64) and where they come from (the echo
// services asked, or firewall.operatorAddress when the spec names it).
// The wizard records them in firewall.allow, so plan and apply use exactly
// what the operator saw and confirmed.
func OperatorSources(ctx context.Context, d *Deps, sp *spec.Spec) (sources []string, from string, err error) {
	op, err := d.operator(ctx, sp)
	if err != nil {
		return nil, op.From, err
	}
	return op.Sources, op.From, nil
}
