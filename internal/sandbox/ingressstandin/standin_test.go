package ingressstandin_test

import (
	"crypto/tls"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/ohmytalos/ohmytalos/internal/sandbox/ingressstandin"
)

// freeAddr is a free port on a random loopback address away from the
// fakes' defaults.
func freeAddr(t *testing.T) string {
	t.Helper()

	ip := fmt.Sprintf("127.%d.%d.%d", 100+rand.IntN(150), 1+rand.IntN(250), 1+rand.IntN(250))

	ln, err := net.Listen("tcp", ip+":0")
	if err != nil {
		t.Fatal(err)
	}

	addr := ln.Addr().String()
	_ = ln.Close()

	return addr
}

// TestListenersAnswerAsTraefik: HTTP gets Traefik's default 404, the TLS
// port shows the default certificate, and a Sync without the address or
// Close stops them.
func TestListenersAnswerAsTraefik(t *testing.T) {
	web, secure := freeAddr(t), freeAddr(t)

	var l ingressstandin.Listeners

	l.Sync(map[string]bool{web: false, secure: true})

	resp, err := (&http.Client{Timeout: 5 * time.Second}).Get("http://" + web + "/")
	if err != nil {
		t.Fatal(err)
	}

	body, _ := io.ReadAll(resp.Body)
	_ = resp.Body.Close()

	if resp.StatusCode != http.StatusNotFound || string(body) != "404 page not found\n" {
		t.Errorf("GET http://%s/: %d %q, want 404 \"404 page not found\\n\"", web, resp.StatusCode, body)
	}

	conn, err := tls.Dial("tcp", secure, &tls.Config{InsecureSkipVerify: true}) //nolint:gosec // the default cert is self-signed
	if err != nil {
		t.Fatal(err)
	}

	if cn := conn.ConnectionState().PeerCertificates[0].Subject.CommonName; cn != ingressstandin.DefaultCertCN {
		t.Errorf("certificate %q, want %q", cn, ingressstandin.DefaultCertCN)
	}

	_ = conn.Close()

	l.Sync(map[string]bool{secure: true})

	if c, err := net.DialTimeout("tcp", web, time.Second); err == nil {
		_ = c.Close()
		t.Errorf("%s still answers after it left the wanted set", web)
	}

	l.Close()
	l.Sync(map[string]bool{web: false})

	for _, a := range []string{web, secure} {
		if c, err := net.DialTimeout("tcp", a, time.Second); err == nil {
			_ = c.Close()
			t.Errorf("%s answers after Close", a)
		}
	}
}

// TestSecureAndBindable: the chart's websecure port is TLS, web is not;
// only loopback IPv4 node addresses are bound.
func TestSecureAndBindable(t *testing.T) {
	for _, c := range []struct {
		name, target string
		port         int64
		want         bool
	}{{"websecure", "websecure", 443, true}, {"https", "8443", 8443, true}, {"web", "web", 80, false}, {"", "8000", 8000, false}} {
		if got := ingressstandin.Secure(c.name, c.target, c.port); got != c.want {
			t.Errorf("Secure(%q, %q, %d) = %v, want %v", c.name, c.target, c.port, got, c.want)
		}
	}

	for ip, want := range map[string]bool{"127.0.1.1": true, "10.0.1.2": false, "::1": false, "": false} {
		if got := ingressstandin.Bindable(ip); got != want {
			t.Errorf("Bindable(%q) = %v, want %v", ip, got, want)
		}
	}
}
