package doctor

import (
	"context"
	"crypto/ecdsa"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"github.com/ohmytalos/ohmytalos/internal/testpki"
	"math/big"
	"net"
	"strings"
	"testing"
	"time"
)

type talosPKI struct{ caPEM, crt, key []byte }

// certPEM issues a certificate (a CA when parent is nil) and returns it
// with its key, PEM encoded.
func certPEM(t *testing.T, cn string, parent *x509.Certificate, parentKey *ecdsa.PrivateKey, usage x509.ExtKeyUsage) (*x509.Certificate, *ecdsa.PrivateKey, []byte, []byte) {
	t.Helper()
	tpl := &x509.Certificate{SerialNumber: big.NewInt(time.Now().UnixNano()), Subject: pkix.Name{CommonName: cn},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour), KeyUsage: x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign}
	if parent == nil {
		tpl.IsCA, tpl.BasicConstraintsValid = true, true
	} else {
		tpl.ExtKeyUsage = []x509.ExtKeyUsage{usage}
	}
	return testpki.Issue(t, tpl, parent, parentKey)
}

// apid listens on loopback with a server certificate from a fresh CA and
// returns the talosconfig's credentials for that CA.
func apid(t *testing.T) (string, talosPKI) {
	t.Helper()
	ca, caKey, caPEM, _ := certPEM(t, "talos", nil, nil, 0)
	_, _, sc, sk := certPEM(t, "apid", ca, caKey, x509.ExtKeyUsageServerAuth)
	_, _, cc, ck := certPEM(t, "os:admin", ca, caKey, x509.ExtKeyUsageClientAuth)
	pair, err := tls.X509KeyPair(sc, sk)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AddCert(ca)
	l, err := tls.Listen("tcp", "127.0.0.1:0", &tls.Config{Certificates: []tls.Certificate{pair}, ClientAuth: tls.RequireAndVerifyClientCert, ClientCAs: pool, NextProtos: []string{"h2"}})
	if err != nil {
		t.Fatal(err)
	}
	acceptAll(t, l, func(c net.Conn) {
		go func() { _ = c.(*tls.Conn).Handshake(); _ = c.Close() }()
	})
	return l.Addr().String(), talosPKI{caPEM: caPEM, crt: cc, key: ck}
}

func talosconfigYAML(p talosPKI, endpoints ...string) []byte {
	b64 := base64.StdEncoding.EncodeToString
	eps := "[]"
	if len(endpoints) > 0 {
		eps = "[" + strings.Join(endpoints, ", ") + "]"
	}
	return []byte("context: prod\ncontexts:\n  prod:\n    endpoints: " + eps + "\n    ca: " + b64(p.caPEM) + "\n    crt: " + b64(p.crt) + "\n    key: " + b64(p.key) + "\n")
}

func TestTalosEndpoints(t *testing.T) {
	addr, p := apid(t)
	_, other := apid(t) // another cluster's credentials
	closed, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	dead := closed.Addr().String()
	_ = closed.Close()
	env := func(tc []byte) *Env {
		e, _ := healthyCluster()
		e.Talosconfig = tc
		return e
	}
	ctx := context.Background()
	expect(t, checkTalosEndpoints(ctx, env(talosconfigYAML(p, addr))), StatusPass, "endpoint "+addr+" answers a TLS handshake")
	expect(t, checkTalosEndpoints(ctx, env(talosconfigYAML(p))), StatusFail, `context "prod" has no endpoints`, "talosctl config endpoint 203.0.113.1 203.0.113.2 203.0.113.3")
	expect(t, checkTalosEndpoints(ctx, env(talosconfigYAML(p, addr, "10.0.1.100"))), StatusFail, "endpoint 10.0.1.100 is the VIP", "talos #11830", "answers a TLS handshake")
	expect(t, checkTalosEndpoints(ctx, env(talosconfigYAML(p, dead))), StatusFail, "endpoint "+dead+" does not answer: tcp connect", "allow TCP 50000")
	expect(t, checkTalosEndpoints(ctx, env(talosconfigYAML(other, addr))), StatusFail, "does not answer: tls handshake", "not signed by the talosconfig's CA")
	expect(t, checkTalosEndpoints(ctx, env([]byte("context: [\n"))), StatusFail, "cannot be read")
	expect(t, checkTalosEndpoints(ctx, env(nil)), StatusSkip, "no talosconfig")
	if h, a := talosEndpointAddr("203.0.113.1"); h != "203.0.113.1" || a != "203.0.113.1:50000" {
		t.Errorf("default port: %s %s", h, a)
	}
	if h, a := talosEndpointAddr("[2001:db8::1]:50001"); h != "2001:db8::1" || a != "[2001:db8::1]:50001" {
		t.Errorf("ipv6 with port: %s %s", h, a)
	}
}
