package steps

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/ohmytalos/ohmytalos/internal/engine"
	"github.com/ohmytalos/ohmytalos/internal/spec"
)

// The lockout guard's tests run pre-flight, plan and the pools step's
// firewall alone (what apply runs before it sets the rules) against a
// fresh sandbox: no cluster is applied.

// preflightWith runs the pre-flight with d.
func preflightWith(t *testing.T, d *Deps, env *engine.Env) Findings {
	t.Helper()
	fs, err := Preflight(context.Background(), d, env)
	if err != nil {
		t.Fatal(err)
	}
	return fs
}

// applyFirewall runs the pools step's firewall part, as apply does, and
// returns its events.
func applyFirewall(t *testing.T, d *Deps, env *engine.Env) ([]engine.Event, error) {
	t.Helper()
	c, err := d.HCloud(context.Background(), env.Spec)
	if err != nil {
		t.Fatal(err)
	}
	id, err := applyClusterID(env)
	if err != nil {
		t.Fatal(err)
	}
	var evs []engine.Event
	err = (&Pools{d}).firewall(context.Background(), c, env, func(ev engine.Event) { evs = append(evs, ev) }, id)
	return evs, err
}

func mustHave(t *testing.T, what, s string, parts ...string) {
	t.Helper()
	for _, p := range parts {
		if !strings.Contains(s, p) {
			t.Errorf("%s lacks %q: %s", what, p, s)
		}
	}
}

// noFirewall fails when the sandbox holds a firewall: a refused lockout
// sets nothing.
func noFirewall(t *testing.T, w *world) {
	t.Helper()
	if n := w.SB.HCloud.Counts()["firewalls"]; n != 0 {
		t.Errorf("%d firewalls were created behind a refused lockout", n)
	}
}

// TestLockoutRefusedWhenAddressUnknown is issue 30's repro: the IP echo
// is unreachable and firewall.allow does not admit this machine (the
// sandbox's operator is loopback). Pre-flight, plan and apply's firewall
// refuse it, naming the detection failure, --allow-lockout and
// --operator-address; nothing is set.
func TestLockoutRefusedWhenAddressUnknown(t *testing.T) {
	t.Parallel()
	w := newWorld(t, "../examples/seed.yaml")
	w.Spec.Firewall.IPEchoURL = "http://127.0.0.1:1/"
	w.Spec.Firewall.Allow = []string{"203.0.113.7/32"}
	env := w.env(t)
	d := w.deps()

	want(t, preflightWith(t, d, env), SeverityError, CheckReach, "firewall.allow",
		"could not be detected", "http://127.0.0.1:1/", "connection refused", "203.0.113.7/32", "might lock this machine out",
		"--operator-address", "firewall.operatorAddress", "--allow-lockout")
	p := planItems(t, d, env)
	if !slices.ContainsFunc(p.Notes, func(n string) bool {
		return strings.Contains(n, "could not be detected") && strings.Contains(n, "--operator-address") && strings.Contains(n, "--allow-lockout")
	}) {
		t.Errorf("plan does not warn about the unknown address: %v", p.Notes)
	}
	_, err := applyFirewall(t, d, env)
	if err == nil {
		t.Fatal("apply set a firewall that may lock this machine out although its address is unknown")
	}
	mustHave(t, "apply's refusal", err.Error(), "not applied", "could not be detected", "http://127.0.0.1:1/", "203.0.113.7/32",
		"might not reach", "--operator-address", "--allow-lockout")
	noFirewall(t, w)

	// --allow-lockout: a warning in pre-flight, and apply sets the firewall
	// with a warning that says so.
	d.AllowLockout = true
	want(t, preflightWith(t, d, env), SeverityWarning, CheckReach, "firewall.allow", "could not be detected")
	evs, err := applyFirewall(t, d, env)
	if err != nil {
		t.Fatalf("apply --allow-lockout: %v", err)
	}
	if !slices.ContainsFunc(evs, func(ev engine.Event) bool {
		return ev.Kind == engine.KindWarning && strings.Contains(ev.Message, "--allow-lockout sets it anyway") && strings.Contains(ev.Message, "could not be detected")
	}) {
		t.Errorf("no --allow-lockout warning in %+v", evs)
	}
}

// TestLockoutOperatorAddressNamed: with the echo unreachable, the address
// --operator-address or firewall.operatorAddress names is checked instead
// (the flag wins); an admitted one passes pre-flight and apply, one
// outside firewall.allow is refused by name. A firewall open to every
// address of the servers' families excludes no one, known or not.
func TestLockoutOperatorAddressNamed(t *testing.T) {
	t.Parallel()
	w := newWorld(t, "../examples/seed.yaml")
	w.Spec.Firewall.IPEchoURL = "http://127.0.0.1:1/"
	w.Spec.Firewall.Allow = []string{"203.0.113.0/24"}
	env := w.env(t)

	d := w.deps()
	d.OperatorAddresses = "203.0.113.7"
	if fs := preflightWith(t, d, env); fs.Has(CheckReach, "firewall.allow") {
		t.Errorf("--operator-address inside firewall.allow: %v", fs)
	}
	if p := planItems(t, d, env); len(p.Notes) != 0 {
		t.Errorf("--operator-address inside firewall.allow: plan notes %v", p.Notes)
	}

	// The spec's field, overridden by the flag.
	w.Spec.Firewall.OperatorAddress = "203.0.113.7"
	d = w.deps()
	if fs := preflightWith(t, d, env); fs.Has(CheckReach, "firewall.allow") {
		t.Errorf("firewall.operatorAddress inside firewall.allow: %v", fs)
	}
	d.OperatorAddresses = "198.51.100.9, 2001:db8::/64"
	want(t, preflightWith(t, d, env), SeverityError, CheckReach, "firewall.allow",
		"does not admit your address [198.51.100.9 2001:db8::/64]", "add 198.51.100.9/32, 2001:db8::/64 to firewall.allow")
	_, err := applyFirewall(t, d, env)
	if err == nil {
		t.Fatal("apply set a firewall that does not admit the address --operator-address names")
	}
	mustHave(t, "apply's refusal", err.Error(), "does not admit your address 198.51.100.9, 2001:db8::/64", "--allow-lockout")
	noFirewall(t, w)

	d.OperatorAddresses = "203.0.113.7"
	if _, err := applyFirewall(t, d, env); err != nil {
		t.Fatalf("apply with an admitted --operator-address: %v", err)
	}
	rules := map[string][]string{"50000": {"203.0.113.0/24"}, "6443": {"203.0.113.0/24"}}
	if got := firewallSourcesOf(t, d, w.Spec); !mapsEqual(got, rules) {
		t.Errorf("firewall sources = %v, want %v", got, rules)
	}

	w.Spec.Firewall.OperatorAddress = ""
	w.Spec.Firewall.Allow = []string{"0.0.0.0/0", "::/0"}
	if fs := preflightWith(t, w.deps(), env); fs.Has(CheckReach, "firewall.allow") {
		t.Errorf("a firewall open to everyone, address unknown: %v", fs)
	}
	w.Spec.Firewall.Allow = []string{"0.0.0.0/0"}
	if fs := preflightWith(t, w.deps(), env); !fs.Has(CheckReach, "firewall.allow") {
		t.Errorf("IPv6 closed to an unknown address of dual-stack servers: %v", fs)
	}
}

// TestLockoutOperatorAddressIsTheDefaultFirewall: with firewall.allow
// empty, the address --operator-address names is what the firewall
// admits (an IPv6 address as its /64, as a detected one), and nothing is
// detected.
func TestLockoutOperatorAddressIsTheDefaultFirewall(t *testing.T) {
	t.Parallel()
	w := newWorld(t, "../examples/seed.yaml")
	w.Spec.Firewall.IPEchoURL = "http://127.0.0.1:1/"
	env := w.env(t)
	d := w.deps()
	d.OperatorAddresses = "203.0.113.7,2001:db8:5:6::9"
	if fs := preflightWith(t, d, env); fs.Has(CheckReach, "firewall.allow") {
		t.Errorf("pre-flight: %v", fs)
	}
	p := planItems(t, d, env)
	if !slices.ContainsFunc(p.Items, func(i engine.PlanItem) bool {
		return i.Kind == "firewall" && strings.Contains(i.Detail, "203.0.113.7/32, 2001:db8:5:6::/64 (your address, from --operator-address)")
	}) {
		t.Errorf("plan does not show the named address: %+v", p.Items)
	}
	if _, err := applyFirewall(t, d, env); err != nil {
		t.Fatal(err)
	}
	rules := map[string][]string{"50000": {"203.0.113.7/32", "2001:db8:5:6::/64"}, "6443": {"203.0.113.7/32", "2001:db8:5:6::/64"}}
	if got := firewallSourcesOf(t, d, w.Spec); !mapsEqual(got, rules) {
		t.Errorf("firewall sources = %v, want %v", got, rules)
	}
}

// TestLockoutDualStackPreflightAgreesWithApply is issue 30's second repro:
// a dual-stack echo (127.0.0.1 and 2001:db8::7) and firewall.allow
// [127.0.0.1/32] on servers with both families. Pre-flight passed it and
// apply refused it at the pools step; both now refuse, naming the IPv6
// address. On IPv4-only servers the IPv6 address need not be admitted,
// and both pass.
func TestLockoutDualStackPreflightAgreesWithApply(t *testing.T) {
	t.Parallel()
	w := newWorld(t, "../examples/seed.yaml")
	w.Spec.Firewall.IPEchoURL = echoServer(t, "127.0.0.1") + "," + echoServer(t, "2001:db8::7")
	w.Spec.Firewall.Allow = []string{"127.0.0.1/32"}
	env := w.env(t)
	d := w.deps()

	want(t, preflightWith(t, d, env), SeverityError, CheckReach, "firewall.allow",
		"does not admit your address [2001:db8::7]", "it admits [127.0.0.1]", "add 2001:db8::/64 to firewall.allow", "--allow-lockout")
	_, err := applyFirewall(t, d, env)
	if err == nil {
		t.Fatal("apply set a firewall that does not admit the operator's IPv6 address")
	}
	mustHave(t, "apply's refusal", err.Error(), "does not admit your address 2001:db8::7 (only 127.0.0.1)", "add 2001:db8::/64 to firewall.allow", "--allow-lockout")
	if strings.Contains(err.Error(), "address 127.0.0.1") {
		t.Errorf("apply's refusal names the admitted IPv4 address: %v", err)
	}
	noFirewall(t, w)

	w.Spec.PublicNetwork.IPv6 = false
	if fs := preflightWith(t, d, env); fs.Has(CheckReach, "firewall.allow") {
		t.Errorf("IPv4-only servers, IPv4 admitted: pre-flight %v", fs)
	}
	if _, err := applyFirewall(t, d, env); err != nil {
		t.Errorf("IPv4-only servers, IPv4 admitted: apply %v", err)
	}
}

// TestLockoutVerdictIsShared: the cases where pre-flight and apply used
// to decide apart now get one verdict. An operator whose only address has
// no family the servers have (IPv6 here, IPv4-only servers) is refused by
// both, naming publicNetwork; in endpoint.mode loadbalancer, pre-flight
// refuses a firewall that excludes the operator as apply does (bootstrap
// dials the nodes' own addresses, which the firewall filters).
func TestLockoutVerdictIsShared(t *testing.T) {
	t.Parallel()
	w := newWorld(t, "../examples/seed.yaml")
	w.Spec.Firewall.IPEchoURL = echoServer(t, "2001:db8::7")
	w.Spec.PublicNetwork.IPv6 = false
	env := w.env(t)
	d := w.deps()
	want(t, preflightWith(t, d, env), SeverityError, CheckReach, "publicNetwork", "your address 2001:db8::7 has no family", "publicNetwork.ipv4 / ipv6")
	_, err := applyFirewall(t, d, env)
	if err == nil {
		t.Fatal("apply set a firewall for an operator of no family the servers have")
	}
	mustHave(t, "apply's refusal", err.Error(), "your address 2001:db8::7 has no family", "publicNetwork", "--allow-lockout")
	noFirewall(t, w)

	w.Spec.Firewall.IPEchoURL = ""
	w.Spec.PublicNetwork.IPv6 = true
	w.Spec.Firewall.Allow = []string{"203.0.113.7/32"}
	w.Spec.Endpoint.Mode = spec.EndpointLoadBalancer
	want(t, preflightWith(t, d, env), SeverityError, CheckReach, "firewall.allow", "does not admit your address [127.0.0.1]")
	if _, err := applyFirewall(t, d, env); err == nil || !strings.Contains(err.Error(), "does not admit your address 127.0.0.1") {
		t.Errorf("apply in loadbalancer mode: %v", err)
	}
}
