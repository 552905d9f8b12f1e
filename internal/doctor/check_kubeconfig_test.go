package doctor

import (
	"context"
	"crypto/ecdsa"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"fmt"
	"github.com/ohmytalos/ohmytalos/internal/testpki"
	"io"
	"log"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// testCA issues the certificates of a fake API server and its admin.
type testCA struct {
	cert *x509.Certificate
	key  *ecdsa.PrivateKey
	pem  []byte
}

func newTestCA(t *testing.T) *testCA {
	t.Helper()
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "kubernetes"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign}
	cert, key, certPEM, _ := testpki.Issue(t, tmpl, nil, nil)
	return &testCA{cert, key, certPEM}
}

// issue returns a certificate and key (PEM) for ips, or a client cert.
func (ca *testCA) issue(t *testing.T, client bool, ips ...string) (certPEM, keyPEM []byte) {
	t.Helper()
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(time.Now().UnixNano()), Subject: pkix.Name{CommonName: "admin"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}, DNSNames: []string{"kubernetes"}}
	if client {
		tmpl.ExtKeyUsage = []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}
	}
	for _, ip := range ips {
		tmpl.IPAddresses = append(tmpl.IPAddresses, net.ParseIP(ip))
	}
	_, _, certPEM, keyPEM = testpki.Issue(t, tmpl, ca.cert, ca.key)
	return certPEM, keyPEM
}

// fakeAPIServer answers /version to clients with a certificate of ca,
// 401 to anyone else, as kube-apiserver does with bad credentials.
func fakeAPIServer(t *testing.T, ca *testCA, sans ...string) string {
	t.Helper()
	crt, key := ca.issue(t, false, sans...)
	pair, err := tls.X509KeyPair(crt, key)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AddCert(ca.cert)
	s := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/version" || len(r.TLS.PeerCertificates) == 0 {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		fmt.Fprint(w, `{"major":"1","minor":"36","gitVersion":"v1.36.3"}`)
	}))
	s.Config.ErrorLog = log.New(io.Discard, "", 0)
	s.TLS = &tls.Config{Certificates: []tls.Certificate{pair}, ClientAuth: tls.VerifyClientCertIfGiven, ClientCAs: pool}
	s.StartTLS()
	t.Cleanup(s.Close)
	return s.URL
}

type kcContext struct{ name, server string }

// kubeconfigFor writes a Talos-style kubeconfig: the first context is current.
func kubeconfigFor(caPEM, crt, key []byte, ctxs ...kcContext) []byte {
	enc := base64.StdEncoding.EncodeToString
	var b strings.Builder
	b.WriteString("apiVersion: v1\nkind: Config\nclusters:\n")
	for _, c := range ctxs {
		fmt.Fprintf(&b, "- name: %s\n  cluster:\n    server: %s\n    certificate-authority-data: %s\n", c.name, c.server, enc(caPEM))
	}
	b.WriteString("users:\n- name: admin@demo\n  user:\n")
	if crt != nil {
		fmt.Fprintf(&b, "    client-certificate-data: %s\n    client-key-data: %s\n", enc(crt), enc(key))
	} else {
		b.WriteString("    {}\n")
	}
	b.WriteString("contexts:\n")
	for _, c := range ctxs {
		fmt.Fprintf(&b, "- name: admin@%s\n  context:\n    cluster: %s\n    user: admin@demo\n", c.name, c.name)
	}
	fmt.Fprintf(&b, "current-context: admin@%s\n", ctxs[0].name)
	return []byte(b.String())
}

// blackhole drops connections to addresses in drop (a firewall, or a
// private address with no route), and dials the rest.
func blackhole(drop ...string) func(ctx context.Context, network, addr string) (net.Conn, error) {
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		for _, d := range drop {
			if strings.HasPrefix(addr, d+":") {
				return nil, &net.OpError{Op: "dial", Net: network, Err: fmt.Errorf("i/o timeout: %w", context.DeadlineExceeded)}
			}
		}
		var dl net.Dialer
		return dl.DialContext(ctx, network, addr)
	}
}

func TestKubeconfigReachable(t *testing.T) {
	ca := newTestCA(t)
	crt, key := ca.issue(t, true)
	good := fakeAPIServer(t, ca, "127.0.0.1")
	vipOnly := fakeAPIServer(t, ca, "10.0.1.100")
	other := newTestCA(t)
	foreign := fakeAPIServer(t, other, "127.0.0.1")
	cases := []struct {
		name       string
		kubeconfig []byte
		drop       []string
		status     Status
		want       string
	}{
		{"public address answers", kubeconfigFor(ca.pem, crt, key, kcContext{"demo", good}), nil, StatusPass, "v1.36.3"},
		{"private VIP unreachable", kubeconfigFor(ca.pem, crt, key, kcContext{"demo", "https://10.0.1.100:6443"}), []string{"10.0.1.100"}, StatusFail, "private address"},
		{"firewall drops", kubeconfigFor(ca.pem, crt, key, kcContext{"demo", "https://203.0.113.7:6443"}), []string{"203.0.113.7"}, StatusFail, "firewall"},
		{"SAN mismatch", kubeconfigFor(ca.pem, crt, key, kcContext{"demo", vipOnly}), nil, StatusFail, "not valid for 127.0.0.1 (its SANs: 10.0.1.100"},
		{"another CA", kubeconfigFor(ca.pem, crt, key, kcContext{"demo", foreign}), nil, StatusFail, "not signed by the kubeconfig's CA"},
		{"no credentials", kubeconfigFor(ca.pem, nil, nil, kcContext{"demo", good}), nil, StatusFail, "rejected the kubeconfig's credentials"},
		{"alternative context down", kubeconfigFor(ca.pem, crt, key, kcContext{"demo", good}, kcContext{"demo-cp-2", "https://203.0.113.8:6443"}), []string{"203.0.113.8"}, StatusWarn, "alternative"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := checkKubeconfigReachable(context.Background(), &Env{Kubeconfig: tc.kubeconfig, Dialer: blackhole(tc.drop...)})
			text := r.Explanation + "\n" + strings.Join(r.Evidence, "\n")
			if r.Status != tc.status || !strings.Contains(text, tc.want) {
				t.Fatalf("status %s (want %s), text %q lacks %q", r.Status, tc.status, text, tc.want)
			}
			if r.Status != StatusPass && r.Fix == "" {
				t.Error("no fix")
			}
		})
	}
	if r := checkKubeconfigReachable(context.Background(), &Env{}); r.Status != StatusSkip {
		t.Errorf("no kubeconfig: %s", r.Status)
	}
}
