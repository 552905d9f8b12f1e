package kubefake_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"io"
	"log"
	"math/big"
	"net/http/httptest"
	"net/netip"
	"testing"
	"time"

	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/ohmytalos/ohmytalos/internal/sandbox/kubefake"
	"github.com/ohmytalos/ohmytalos/internal/testpki"
)

type pki struct {
	pool             *x509.CertPool
	certPEM, keyPEM  []byte
	otherCert, other []byte // a client certificate from another CA
}

func newCert(t *testing.T, cn string, parent *x509.Certificate, parentKey *ecdsa.PrivateKey, ca bool) (*x509.Certificate, *ecdsa.PrivateKey, []byte, []byte) {
	t.Helper()
	tpl := &x509.Certificate{
		SerialNumber: big.NewInt(time.Now().UnixNano()),
		Subject:      pkix.Name{CommonName: cn, Organization: []string{"system:masters"}},
		NotBefore:    time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		KeyUsage:    x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
		IsCA:        ca, BasicConstraintsValid: true,
	}

	return testpki.Issue(t, tpl, parent, parentKey)
}

func newPKI(t *testing.T) pki {
	t.Helper()

	ca, caKey, _, _ := newCert(t, "kubernetes", nil, nil, true)
	_, _, certPEM, keyPEM := newCert(t, "admin", ca, caKey, false)
	other, otherKey, _, _ := newCert(t, "other-ca", nil, nil, true)
	_, _, oc, ok := newCert(t, "admin", other, otherKey, false)

	pool := x509.NewCertPool()
	pool.AddCert(ca)

	return pki{pool: pool, certPEM: certPEM, keyPEM: keyPEM, otherCert: oc, other: ok}
}

type env struct {
	srv    *kubefake.Server
	url    string
	caPEM  []byte
	pki    pki
	cfg    *rest.Config
	cs     *kubernetes.Clientset
	dyn    *dynamic.DynamicClient
	cancel context.CancelFunc
}

func newEnv(t *testing.T, o kubefake.Options) *env {
	t.Helper()

	p := newPKI(t)
	o.ClientCAs = p.pool

	if o.Version == "" {
		o.Version = "v1.35.0"
	}

	if len(o.PodCIDRs) == 0 {
		o.PodCIDRs = []netip.Prefix{netip.MustParsePrefix("10.42.0.0/16")}
	}

	if o.Resync == 0 {
		o.Resync = 20 * time.Millisecond
	}

	s := kubefake.New(o)
	hs := httptest.NewUnstartedServer(s)
	hs.Config.ErrorLog = log.New(io.Discard, "", 0)
	hs.TLS = &tls.Config{MinVersion: tls.VersionTLS12, ClientAuth: tls.RequestClientCert}
	hs.StartTLS()

	caPEM := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: hs.Certificate().Raw})
	cfg := &rest.Config{
		Host: hs.URL,
		TLSClientConfig: rest.TLSClientConfig{
			CAData: caPEM, CertData: p.certPEM, KeyData: p.keyPEM,
		},
		// The fake speaks JSON only: typed clients default to protobuf bodies.
		ContentConfig: rest.ContentConfig{ContentType: "application/json"},
		QPS:           1000, Burst: 1000, Timeout: 10 * time.Second,
	}

	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}

	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}

	t.Cleanup(func() {
		hs.CloseClientConnections()
		hs.Close()
		s.Close()
	})

	return &env{srv: s, url: hs.URL, caPEM: caPEM, pki: p, cfg: cfg, cs: cs, dyn: dyn}
}

func testCtx(t *testing.T) context.Context {
	t.Helper()

	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	t.Cleanup(cancel)

	return ctx
}

// eventually polls cond until it holds or the test context ends.
func eventually(t *testing.T, ctx context.Context, what string, cond func() (bool, string)) {
	t.Helper()

	last := ""

	for {
		ok, detail := cond()
		if ok {
			return
		}

		last = detail

		select {
		case <-ctx.Done():
			t.Fatalf("%s: never happened; last: %s", what, last)
		case <-time.After(10 * time.Millisecond):
		}
	}
}
