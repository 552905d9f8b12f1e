package factory_test

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/ohmytalos/ohmytalos/internal/factory"
	"github.com/ohmytalos/ohmytalos/internal/sandbox/factoryfake"
)

func TestRegisterAgainstFake(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(factoryfake.New())
	defer srv.Close()
	c := factory.NewClient(srv.URL+"/", srv.Client())
	s := factory.New([]string{"siderolabs/tailscale"}, []string{"net.ifnames=1"})
	id, err := c.Register(context.Background(), s)
	if err != nil {
		t.Fatal(err)
	}
	if want, _ := s.ID(); id != want {
		t.Fatalf("Register = %s, want %s", id, want)
	}
}

func TestRegisterRejectsDifferentID(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(http.StatusCreated)
		_, _ = w.Write([]byte(`{"id":"` + strings.Repeat("0", 64) + `"}`))
	}))
	defer srv.Close()
	_, err := factory.NewClient(srv.URL, srv.Client()).Register(context.Background(), factory.Schematic{})
	if err == nil || !strings.Contains(err.Error(), factory.EmptySchematicID) || !strings.Contains(err.Error(), factory.URLEnv) {
		t.Fatalf("err = %v, want a mismatch naming the computed ID and %s", err, factory.URLEnv)
	}
}

func TestErrorStatusIsReported(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		http.Error(w, "error parsing schematic: unknown field", http.StatusBadRequest)
	}))
	defer srv.Close()
	_, err := factory.NewClient(srv.URL, srv.Client()).Register(context.Background(), factory.Schematic{})
	if err == nil || !strings.Contains(err.Error(), "rejected the schematic as invalid") || !strings.Contains(err.Error(), "unknown field") {
		t.Fatalf("err = %v, want the rejection and its details", err)
	}

	srv5 := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		http.Error(w, "upstream registry down", http.StatusBadGateway)
	}))
	defer srv5.Close()
	_, err = factory.NewClient(srv5.URL, srv5.Client()).Versions(context.Background())
	if err == nil || !strings.Contains(err.Error(), "502") || !strings.Contains(err.Error(), "upstream registry down") {
		t.Fatalf("err = %v, want the status and body", err)
	}
}

func TestRegisterAccepts200(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		_, _ = w.Write([]byte(`{"id":"` + factory.EmptySchematicID + `"}`))
	}))
	defer srv.Close()
	id, err := factory.NewClient(srv.URL, srv.Client()).Register(context.Background(), factory.Schematic{})
	if err != nil || id != factory.EmptySchematicID {
		t.Fatalf("Register = %q, %v", id, err)
	}
}

func TestUnreachableFactory(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close() // nothing listens there any more

	base := "http://" + addr
	c := factory.NewClient(base, &http.Client{Timeout: 5 * time.Second})
	_, err = c.Versions(context.Background())
	if err == nil {
		t.Fatal("Versions succeeded against a closed port")
	}
	for _, want := range []string{base, "unreachable", factory.URLEnv} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not mention %q", err, want)
		}
	}
}

func TestBadBaseURL(t *testing.T) {
	t.Parallel()
	_, err := factory.NewClient("factory.example", nil).Versions(context.Background())
	if err == nil || !strings.Contains(err.Error(), factory.URLEnv) {
		t.Fatalf("err = %v, want a message naming %s", err, factory.URLEnv)
	}
}

func TestPlainHTTPToAnotherHostIsRefused(t *testing.T) {
	t.Parallel()
	// 192.0.2.1 (TEST-NET-1) is never dialled: the URL is refused first.
	_, err := factory.NewClient("http://192.0.2.1:8080", nil).Versions(context.Background())
	if err == nil || !strings.Contains(err.Error(), factory.URLEnv) || !strings.Contains(err.Error(), "use https") {
		t.Fatalf("err = %v, want a refusal naming %s and https", err, factory.URLEnv)
	}
}
