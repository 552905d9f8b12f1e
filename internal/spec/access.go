package spec

import (
	"fmt"
	"net/url"
	"strings"

	"github.com/ohmytalos/ohmytalos/internal/myip"
	"github.com/ohmytalos/ohmytalos/internal/safeurl"
)

// validateAccess checks endpoint.access, firewall.ipEchoURL and
// firewall.operatorAddress.
func (s *Spec) validateAccess(add func(field, reason, fix string)) {
	switch s.Endpoint.Access {
	case "":
	case AccessPublic:
		if s.Endpoint.Mode == EndpointLoadBalancer {
			add("endpoint.access", "is only for endpoint.mode vip (the load balancer is the public address)", "remove endpoint.access")
		}
	case AccessTailscale:
		if s.Endpoint.Mode == EndpointLoadBalancer {
			add("endpoint.access", "is only for endpoint.mode vip (the load balancer is the public address)", "remove endpoint.access")
		}
		if s.Secrets.TailscaleAuthKey == nil {
			add("endpoint.access", "tailscale needs secrets.tailscaleAuthKey (the control planes join your tailnet with it)",
				"set secrets.tailscaleAuthKey to a reusable, pre-approved auth key, or use endpoint.access: public")
		}
	default:
		add("endpoint.access", fmt.Sprintf("%q is not an access mode", s.Endpoint.Access), `use "public" (the control planes' public addresses) or "tailscale" (the VIP through your tailnet)`)
	}
	for _, raw := range strings.Split(s.Firewall.IPEchoURL, ",") {
		raw = strings.TrimSpace(raw)
		if raw == "" {
			continue
		}
		u, err := url.Parse(raw)
		if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
			add("firewall.ipEchoURL", fmt.Sprintf("%q is not an http(s) URL", raw), `use an IP-echo service such as "https://api.ipify.org", or omit it`)
		} else if u.Scheme == "http" && !safeurl.IsLoopbackHost(u.Hostname()) {
			add("firewall.ipEchoURL", fmt.Sprintf("%q uses plain http to another machine: anyone on the way could answer and decide whom the firewall admits", raw),
				`use https (e.g. "https://api.ipify.org"); plain http only to this machine (localhost)`)
		}
	}
	if v := s.Firewall.OperatorAddress; v != "" {
		if _, err := myip.ParseOperator(v); err != nil {
			add(myip.OperatorKey, err.Error()+" (it names your public address, which firewall.allow must admit)",
				`write your address or range, e.g. "203.0.113.7", "203.0.113.7, 2001:db8::7" or "198.51.100.0/24", or omit it to detect it`)
		}
	}
}

// OpenToInternet reports whether firewall.allow admits every address.
func (s *Spec) OpenToInternet() bool {
	for _, a := range s.Firewall.Allow {
		if a == "0.0.0.0/0" || a == "::/0" {
			return true
		}
	}
	return false
}
