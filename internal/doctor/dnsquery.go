package doctor

import (
	"context"
	"fmt"
	"net"

	"github.com/miekg/dns"
)

// resolverAddr returns env.Resolver, or the first nameserver of
// /etc/resolv.conf when it is empty.
func resolverAddr(env *Env) (string, error) {
	if env.Resolver != "" {
		return env.Resolver, nil
	}
	cfg, err := dns.ClientConfigFromFile("/etc/resolv.conf")
	if err != nil {
		return "", fmt.Errorf("no --resolver given and the system resolver is unknown: %w", err)
	}
	if len(cfg.Servers) == 0 {
		return "", fmt.Errorf("no --resolver given and /etc/resolv.conf lists no nameserver")
	}
	return net.JoinHostPort(cfg.Servers[0], cfg.Port), nil
}

// lookup asks server for name/qtype with recursion desired, retrying over
// TCP when the UDP answer is truncated. NXDOMAIN is an empty answer, not an
// error.
func lookup(ctx context.Context, server, name string, qtype uint16) ([]dns.RR, error) {
	m := new(dns.Msg)
	m.SetQuestion(dns.Fqdn(name), qtype)
	m.RecursionDesired = true
	c := &dns.Client{Net: "udp"}
	r, _, err := c.ExchangeContext(ctx, m, server)
	if err == nil && r.Truncated {
		c.Net = "tcp"
		r, _, err = c.ExchangeContext(ctx, m, server)
	}
	if err != nil {
		return nil, fmt.Errorf("query %s %s at %s: %w", dns.TypeToString[qtype], name, server, err)
	}
	switch r.Rcode {
	case dns.RcodeSuccess, dns.RcodeNameError:
		return r.Answer, nil
	default:
		return nil, fmt.Errorf("query %s %s at %s: server answered %s", dns.TypeToString[qtype], name, server, dns.RcodeToString[r.Rcode])
	}
}
