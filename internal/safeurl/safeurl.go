// Package safeurl decides which URLs ohmytalos may send tokens, secrets or
// the operator's address to: https anywhere, plain http only to this
// machine (loopback), where nobody else can read or answer the traffic.
package safeurl

import (
	"fmt"
	"net"
	"net/url"
	"strings"
)

// IsLoopbackHost reports whether host (a URL's Hostname) is this machine:
// localhost or a loopback address.
func IsLoopbackHost(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// Check parses raw and returns it when it is an https URL, or an http URL
// to a loopback host. what names where the URL came from (a variable such
// as HCLOUD_ENDPOINT, or a spec field) so the error says what to change.
func Check(what, raw string) (*url.URL, error) {
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil || u.Host == "" || (u.Scheme != "https" && u.Scheme != "http") {
		return nil, fmt.Errorf("%s %q is not an absolute http(s) URL: set it to an https URL", what, raw)
	}
	if u.Scheme == "http" && !IsLoopbackHost(u.Hostname()) {
		return nil, fmt.Errorf("%s %q uses plain http to %s, another machine: tokens and addresses would travel in clear and anyone on the way could answer; "+
			"use https (plain http is accepted only to this machine: localhost, 127.0.0.1, ::1)", what, raw, u.Hostname())
	}
	return u, nil
}
