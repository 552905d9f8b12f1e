package talos

import (
	"crypto/x509"
	"encoding/base64"
	"encoding/pem"
	"slices"
	"testing"

	clientconfig "github.com/siderolabs/talos/pkg/machinery/client/config"
	"github.com/siderolabs/talos/pkg/machinery/config/generate/secrets"
)

func TestTalosconfig(t *testing.T) {
	b := testBundle(t)
	endpoints := []string{"10.0.1.11", "10.0.1.12", "10.0.1.13"}

	data, err := Talosconfig(b, testCluster(), endpoints)
	if err != nil {
		t.Fatal(err)
	}

	cfg, err := clientconfig.FromBytes(data)
	if err != nil {
		t.Fatalf("talosconfig does not load: %v", err)
	}

	if cfg.Context != "prod" {
		t.Errorf("current context = %q, want prod", cfg.Context)
	}

	ctx := cfg.Contexts["prod"]
	if ctx == nil {
		t.Fatalf("no prod context in %v", cfg.Contexts)
	}

	if !slices.Equal(ctx.Endpoints, endpoints) {
		t.Errorf("endpoints = %v, want %v", ctx.Endpoints, endpoints)
	}

	// The client certificate chains to the bundle's Talos CA and is admin.
	caPEM, _ := pem.Decode(b.Certs.OS.Crt)
	if caPEM == nil {
		t.Fatal("bundle OS CA is not PEM")
	}

	ca, err := x509.ParseCertificate(caPEM.Bytes)
	if err != nil {
		t.Fatal(err)
	}

	crtPEM := decodeB64PEM(t, ctx.Crt)

	crt, err := x509.ParseCertificate(crtPEM.Bytes)
	if err != nil {
		t.Fatal(err)
	}

	if err := crt.CheckSignatureFrom(ca); err != nil {
		t.Errorf("client certificate is not signed by the Talos CA: %v", err)
	}

	if !slices.Contains(crt.Subject.Organization, "os:admin") {
		t.Errorf("client certificate roles = %v, want os:admin", crt.Subject.Organization)
	}
}

func TestTalosconfigErrors(t *testing.T) {
	b := testBundle(t)

	if _, err := Talosconfig(nil, testCluster(), []string{"10.0.1.11"}); err == nil {
		t.Error("nil bundle: want an error")
	}

	if _, err := Talosconfig(b, testCluster(), nil); err == nil {
		t.Error("no endpoints: want an error")
	}

	if _, err := Talosconfig(&secrets.Bundle{}, testCluster(), []string{"10.0.1.11"}); err == nil {
		t.Error("empty bundle: want an error")
	}

	// A bundle without a clock still works (the copy gets the system clock).
	noClock := *b
	noClock.Clock = nil

	if _, err := Talosconfig(&noClock, testCluster(), []string{"10.0.1.11"}); err != nil {
		t.Errorf("bundle without clock: %v", err)
	}
}

// decodeB64PEM decodes a talosconfig certificate field (base64 of PEM).
func decodeB64PEM(t *testing.T, s string) *pem.Block {
	t.Helper()

	raw, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		t.Fatalf("certificate is not base64: %v", err)
	}

	block, _ := pem.Decode(raw)
	if block == nil {
		t.Fatal("certificate is not PEM")
	}

	return block
}
