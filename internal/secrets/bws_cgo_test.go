//go:build cgo

package secrets_test

import (
	"context"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/ohmytalos/ohmytalos/internal/secrets"
)

// The real SDK, pointed at a closed loopback port, must fail fast with an
// error that names the server and never the token.
func TestBWSUnreachableServer(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	server := "http://" + ln.Addr().String()
	ln.Close()

	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	r := secrets.NewResolver(secrets.Options{Env: envMap(map[string]string{"BWS_ACCESS_TOKEN": fakeToken})})
	_, err = r.Lookup(ctx, secrets.Ref{Provider: "bws", Ref: secretID, ServerURL: server})
	if err == nil {
		t.Fatal("Lookup succeeded against a closed port")
	}
	t.Logf("error: %v", err)
	for _, want := range []string{"unreachable", server + "/identity"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not mention %q", err, want)
		}
	}
	for _, part := range strings.FieldsFunc(fakeToken, func(r rune) bool { return r == '.' || r == ':' }) {
		if len(part) > 8 && strings.Contains(err.Error(), part) {
			t.Errorf("error leaks part of the token: %q", err)
		}
	}
}

// A context that ends first abandons the SDK call.
func TestBWSContextCancelled(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0") // accepts, never answers
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	r := secrets.NewResolver(secrets.Options{Env: envMap(map[string]string{"BWS_ACCESS_TOKEN": fakeToken})})
	start := time.Now()
	_, err = r.Lookup(ctx, secrets.Ref{Provider: "bws", Ref: secretID, ServerURL: "http://" + ln.Addr().String()})
	if err == nil || !strings.Contains(err.Error(), "deadline exceeded") {
		t.Fatalf("err = %v, want a deadline error", err)
	}
	if time.Since(start) > 5*time.Second {
		t.Fatalf("Lookup took %v after its context ended", time.Since(start))
	}
}
