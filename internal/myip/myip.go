// Package myip finds the operator's own public addresses from IP-echo
// services (an HTTP GET whose body is the caller's address), so the
// cluster firewall can admit exactly the operator instead of the internet.
package myip

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/netip"
	"strings"
	"sync"
	"time"

	"github.com/ohmytalos/ohmytalos/internal/safeurl"
)

// URLEnv names the environment variable that overrides the echo services
// (one URL, or several separated by commas). The sandbox exports it.
const URLEnv = "OHMYTALOS_IP_ECHO_URL"

// SpecKey is the spec field that sets the echo services.
const SpecKey = "firewall.ipEchoURL"

// DefaultURLs are the echo services used when neither the spec nor
// $OHMYTALOS_IP_ECHO_URL names one: ipify answers over IPv4 only on
// api.ipify.org and over IPv6 only on api6.ipify.org, so each URL yields one
// family (https://www.ipify.org documents both hosts).
func DefaultURLs() []string {
	return []string{"https://api.ipify.org", "https://api6.ipify.org"}
}

// Timeout bounds each echo request.
const Timeout = 8 * time.Second

// Addresses are the operator's public addresses; a zero Addr means the
// family was not seen (no IPv6 connectivity is common).
type Addresses struct {
	IPv4 netip.Addr
	IPv6 netip.Addr
}

// Sources returns the firewall source ranges for the addresses: the IPv4
// address as a /32 and the IPv6 address's /64 (one customer network:
// providers hand out a /64, and the address inside it changes with privacy
// extensions).
func (a Addresses) Sources() []string {
	var out []string
	if a.IPv4.IsValid() {
		out = append(out, netip.PrefixFrom(a.IPv4, 32).String())
	}
	if a.IPv6.IsValid() {
		p, _ := a.IPv6.Prefix(64)
		out = append(out, p.String())
	}
	return out
}

// String lists the addresses, for messages.
func (a Addresses) String() string {
	var out []string
	if a.IPv4.IsValid() {
		out = append(out, a.IPv4.String())
	}
	if a.IPv6.IsValid() {
		out = append(out, a.IPv6.String())
	}
	return strings.Join(out, ", ")
}

// URLs picks the echo services: the spec's value, else the environment's,
// else DefaultURLs. Each value may hold several URLs separated by commas.
func URLs(fromSpec, fromEnv string) []string {
	for _, v := range []string{fromSpec, fromEnv} {
		var out []string
		for _, u := range strings.Split(v, ",") {
			if u = strings.TrimSpace(u); u != "" {
				out = append(out, u)
			}
		}
		if len(out) > 0 {
			return out
		}
	}
	return DefaultURLs()
}

// Detect asks every URL at once and keeps the first IPv4 and the first IPv6
// answer, in URL order. A URL that fails is fine as long as some address
// is found (a network without IPv6 cannot reach an IPv6-only service);
// when none is, the error names every URL, why it failed, and what to set
// instead.
func Detect(ctx context.Context, client *http.Client, urls []string) (Addresses, error) {
	if client == nil {
		client = http.DefaultClient
	}
	// The answer decides whom the firewall admits: an http answer from
	// another machine could be anyone's.
	for _, u := range urls {
		if _, err := safeurl.Check("IP-echo URL ("+SpecKey+" or $"+URLEnv+")", u); err != nil {
			return Addresses{}, fmt.Errorf("detect your public address: %w", err)
		}
	}
	type answer struct {
		addr netip.Addr
		err  error
	}
	answers := make([]answer, len(urls))
	var wg sync.WaitGroup
	for i, u := range urls {
		wg.Add(1)
		go func() {
			defer wg.Done()
			a, err := ask(ctx, client, u)
			answers[i] = answer{a, err}
		}()
	}
	wg.Wait()
	var out Addresses
	var errs []error
	for i, a := range answers {
		switch {
		case a.err != nil:
			errs = append(errs, fmt.Errorf("%s: %w", urls[i], a.err))
		case a.addr.Is4() && !out.IPv4.IsValid():
			out.IPv4 = a.addr
		case a.addr.Is6() && !out.IPv6.IsValid():
			out.IPv6 = a.addr
		}
	}
	if !out.IPv4.IsValid() && !out.IPv6.IsValid() {
		return out, &DetectError{Causes: errs}
	}
	return out, nil
}

// DetectError is Detect's error when no echo service told an address:
// Causes holds each URL's failure.
type DetectError struct{ Causes []error }

// Cause is what failed, without the advice: each URL and why.
func (e *DetectError) Cause() string {
	out := make([]string, len(e.Causes))
	for i, c := range e.Causes {
		out[i] = c.Error()
	}
	return strings.Join(out, "; ")
}

func (e *DetectError) Error() string {
	return fmt.Sprintf("detect your public address (the firewall admits only you to the Talos and Kubernetes APIs): %s; "+
		"name your address with %s (or %s), set firewall.allow to the ranges that may reach them (e.g. [\"203.0.113.7/32\"]), or point %s or $%s at another IP-echo service",
		e.Cause(), OperatorFlag, OperatorKey, SpecKey, URLEnv)
}

func (e *DetectError) Unwrap() []error { return e.Causes }

// ask GETs one echo URL and parses the body as an address.
func ask(ctx context.Context, client *http.Client, url string) (netip.Addr, error) {
	ctx, cancel := context.WithTimeout(ctx, Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return netip.Addr{}, fmt.Errorf("not a valid URL: %w", err)
	}
	req.Header.Set("Accept", "text/plain")
	resp, err := client.Do(req)
	if err != nil {
		return netip.Addr{}, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 256))
	if err != nil {
		return netip.Addr{}, fmt.Errorf("read the answer: %w", err)
	}
	if resp.StatusCode != http.StatusOK {
		return netip.Addr{}, fmt.Errorf("answered %s", resp.Status)
	}
	text := strings.TrimSpace(string(body))
	a, err := netip.ParseAddr(text)
	if err != nil {
		return netip.Addr{}, fmt.Errorf("answered %q, which is not an IP address", truncate(text, 40))
	}
	a = a.Unmap().WithZone("")
	if a.IsUnspecified() || a.IsMulticast() {
		return netip.Addr{}, fmt.Errorf("answered %s, which is not a host address", a)
	}
	return a, nil
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
