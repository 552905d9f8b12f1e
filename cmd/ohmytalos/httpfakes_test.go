package main

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"
)

// ipEcho serves 203.0.113.7 as the operator's public address and points
// OHMYTALOS_IP_ECHO_URL at it for the test, so no test reaches the
// internet for the firewall's source; it stops with the test.
func ipEcho(t *testing.T) {
	t.Helper()
	echo := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { _, _ = w.Write([]byte("203.0.113.7")) }))
	t.Cleanup(echo.Close)
	t.Setenv("OHMYTALOS_IP_ECHO_URL", echo.URL)
}

// echoingHetzner is a Hetzner API that refuses every request with an
// error quoting the request's Authorization header, as a misbehaving proxy
// might: whatever path the error takes must come out redacted.
func echoingHetzner(t *testing.T) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusServiceUnavailable)
		fmt.Fprintf(w, `{"error":{"code":"unavailable","message":"upstream refused %s"}}`, r.Header.Get("Authorization"))
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}
