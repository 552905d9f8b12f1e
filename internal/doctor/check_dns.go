package doctor

import (
	"context"
	"fmt"
	"net"
	"strings"
	"time"

	"github.com/miekg/dns"
)

// probeTimeout bounds one TCP connect of a listener probe.
const probeTimeout = 3 * time.Second

// checkDNSIPv6 resolves A and AAAA for every domain and connects to each
// AAAA address on 80 and 443: Let's Encrypt prefers IPv6, so an AAAA record
// with nothing listening makes HTTP-01 time out (field notes, pitfall 7).
func checkDNSIPv6(ctx context.Context, env *Env) Result {
	if len(env.Domains) == 0 {
		return skip("no domains configured")
	}
	server, err := resolverAddr(env)
	if err != nil {
		return Result{Status: StatusError, Explanation: err.Error(), Fix: "pass --resolver host:port"}
	}
	var evidence, problems []string
	for _, d := range env.Domains {
		a, err := lookup(ctx, server, d, dns.TypeA)
		if err != nil {
			return sourceError("DNS", err)
		}
		aaaa, err := lookup(ctx, server, d, dns.TypeAAAA)
		if err != nil {
			return sourceError("DNS", err)
		}
		v4 := addrsOf(a)
		v6 := addrsOf(aaaa)
		evidence = append(evidence, fmt.Sprintf("%s: A %s, AAAA %s", d, orNone(v4), orNone(v6)))
		if len(v6) > 0 && env.IngressIPv6 != nil && !*env.IngressIPv6 {
			evidence = append(evidence, fmt.Sprintf("%s: has an AAAA record, yet ohmytalos set the ingress up for IPv4 only (plan lists no AAAA record)", d))
		}
		for _, ip := range v6 {
			for _, port := range []string{"80", "443"} {
				addr := net.JoinHostPort(ip, port)
				if err := probeTCP(ctx, env, "tcp6", addr); err != nil {
					problems = append(problems, fmt.Sprintf("%s: nothing accepts connections on %s (%v)", d, addr, err))
				} else {
					evidence = append(evidence, fmt.Sprintf("%s: %s accepts connections", d, addr))
				}
			}
		}
	}
	if len(problems) > 0 {
		return failed(problems, evidence,
			"an AAAA record points at an address where nothing listens on IPv6. Let's Encrypt tries IPv6 first when a name has an AAAA record, "+
				"so HTTP-01 challenges time out and certificates are never issued, while IPv4 clients see nothing wrong. "+
				"external-dns publishes the load balancer's IPv6 by default.",
			"either remove the AAAA records (external-dns: stop publishing the IPv6 target, e.g. the Service annotation load-balancer.hetzner.cloud/ipv6-disabled: \"true\"), "+
				"or make the load balancer and ingress listen on IPv6 for ports 80 and 443")
	}
	return pass(evidence...)
}

func addrsOf(rrs []dns.RR) []string {
	var out []string
	for _, rr := range rrs {
		switch v := rr.(type) {
		case *dns.A:
			out = append(out, v.A.String())
		case *dns.AAAA:
			out = append(out, v.AAAA.String())
		}
	}
	return out
}

func probeTCP(ctx context.Context, env *Env, network, addr string) error {
	pctx, cancel := context.WithTimeout(ctx, probeTimeout)
	defer cancel()
	c, err := env.dial(pctx, network, addr)
	if err != nil {
		return err
	}
	return c.Close()
}

// externalDNSOwners queries the TXT records external-dns writes for name:
// the record at the name itself (old format) and the per-type records
// prefixed "a-", "aaaa-" and "cname-" (the format since external-dns 0.12).
func externalDNSOwners(ctx context.Context, server, name string) (map[string][]string, error) {
	owners := map[string][]string{}
	for _, n := range []string{name, "a-" + name, "aaaa-" + name, "cname-" + name} {
		rrs, err := lookup(ctx, server, n, dns.TypeTXT)
		if err != nil {
			return nil, err
		}
		for _, rr := range rrs {
			t, ok := rr.(*dns.TXT)
			if !ok {
				continue
			}
			if owner, ok := parseHeritage(strings.Join(t.Txt, "")); ok {
				owners[owner] = append(owners[owner], n)
			}
		}
	}
	return owners, nil
}

// parseHeritage extracts the owner from an external-dns registry TXT value
// "heritage=external-dns,external-dns/owner=X,external-dns/resource=...".
func parseHeritage(v string) (string, bool) {
	v = strings.Trim(v, `"`)
	if !strings.HasPrefix(v, "heritage=external-dns") {
		return "", false
	}
	for _, kv := range strings.Split(v, ",") {
		if k, val, ok := strings.Cut(kv, "="); ok && k == "external-dns/owner" {
			return val, true
		}
	}
	return "", true
}

// checkExternalDNSOwner verifies that the domains' external-dns TXT records
// name one owner, the configured one: two external-dns instances with
// policy sync fight over the records every interval (field notes, pitfall 6).
func checkExternalDNSOwner(ctx context.Context, env *Env) Result {
	if len(env.Domains) == 0 {
		return skip("no domains configured")
	}
	server, err := resolverAddr(env)
	if err != nil {
		return Result{Status: StatusError, Explanation: err.Error(), Fix: "pass --resolver host:port"}
	}
	all := map[string]bool{}
	var evidence []string
	for _, d := range env.Domains {
		owners, err := externalDNSOwners(ctx, server, d)
		if err != nil {
			return sourceError("DNS", err)
		}
		if len(owners) == 0 {
			evidence = append(evidence, d+": no external-dns TXT record")
		}
		for _, o := range sortedKeys(keysOf(owners)) {
			names := owners[o]
			all[o] = true
			evidence = append(evidence, fmt.Sprintf("%s: owner %q (TXT at %s)", d, o, strings.Join(names, ", ")))
		}
	}
	owners := sortedKeys(all)
	want := env.ExternalDNSOwner
	switch {
	case len(owners) == 0 && want == "":
		return pass(append(evidence, "no record is managed by external-dns")...)
	case len(owners) == 0:
		return Result{Status: StatusWarn, Evidence: evidence,
			Explanation: fmt.Sprintf("external-dns is configured with owner %q but none of the domains carries its TXT ownership records, so it manages none of them", want),
			Fix:         "check the external-dns logs (domain filter, provider credentials) and its --txt-owner-id"}
	case len(owners) > 1:
		return Result{Status: StatusFail, Evidence: evidence,
			Explanation: fmt.Sprintf("the domains are owned by %d external-dns instances (%s). Each one with policy sync rewrites the records to its own view every interval, "+
				"typically an old cluster's external-dns still running next to the new one.", len(owners), strings.Join(quoteAll(owners), ", ")),
			Fix: "deploy external-dns on the new cluster first with the same txtOwnerId, then scale the old cluster's external-dns to 0; " +
				"delete the TXT records of owners that no longer exist"}
	case want != "" && owners[0] != want:
		return Result{Status: StatusFail, Evidence: evidence,
			Explanation: fmt.Sprintf("the records are owned by %q, not by this cluster's %q: this cluster's external-dns will neither update nor delete them, and the other owner keeps enforcing its view", owners[0], want),
			Fix:         fmt.Sprintf("set this cluster's external-dns txtOwnerId to %q (taking over the records), and scale the external-dns that runs with owner %q to 0", owners[0], owners[0])}
	}
	return pass(evidence...)
}

func quoteAll(s []string) []string {
	out := make([]string, len(s))
	for i, v := range s {
		out[i] = fmt.Sprintf("%q", v)
	}
	return out
}
