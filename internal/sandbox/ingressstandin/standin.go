package ingressstandin

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"math/big"
	"net"
	"net/http"
	"strconv"
	"sync"
	"time"
)

// Image is the image the stand-in recognises: the traefik chart runs
// docker.io/traefik:<appVersion> (traefik/traefik-helm-chart
// traefik/values.yaml, image.registry docker.io, image.repository traefik).
const Image = "traefik"

// DefaultCertCN is the subject of the self-signed certificate Traefik
// serves when no other matches (traefik/traefik pkg/tls/generate,
// DefaultDomain).
const DefaultCertCN = "TRAEFIK DEFAULT CERT"

// Listeners are the stand-in's node-port listeners: what Cilium's
// kube-proxy replacement exposes on every node for a NodePort or
// LoadBalancer Service, answered as Traefik answers with no route
// configured: its default router is http.NotFoundHandler, "404 page not
// found" (traefik/traefik pkg/server/router/router.go,
// BuildDefaultHTTPRouter). The zero value is ready; Close ends it.
type Listeners struct {
	mu     sync.Mutex
	open   map[string]*listener // "ip:port" -> listener
	cert   *tls.Certificate
	closed bool
}

type listener struct {
	srv *http.Server
	tls bool
}

// Secure reports whether a Service port is Traefik's TLS entry point: the
// chart's websecure port (name websecure, targetPort websecure, the
// container port 8443) or port 443 (traefik/traefik-helm-chart
// traefik/values.yaml, ports.websecure).
func Secure(name, targetPort string, port int64) bool {
	return name == "websecure" || targetPort == "websecure" || targetPort == "8443" || targetPort == "443" || port == 443
}

// Bindable reports whether the sandbox can listen on a node address: the
// fakes' servers have loopback public IPv4s (127.0.0.0/8); a private
// network address (10.0.0.0/16) is only reported, never bound.
func Bindable(ip string) bool {
	a := net.ParseIP(ip)

	return a != nil && a.To4() != nil && a.IsLoopback()
}

// Addr is "ip:port" for a node address and a node port.
func Addr(ip string, nodePort int64) string {
	return net.JoinHostPort(ip, strconv.FormatInt(nodePort, 10))
}

// Sync opens and closes listeners to match want ("ip:port" -> TLS); an
// address that cannot be bound is tried again on the next Sync. After
// Close it does nothing.
func (l *Listeners) Sync(want map[string]bool) {
	l.mu.Lock()
	defer l.mu.Unlock()

	if l.closed {
		return
	}

	if l.open == nil {
		l.open = map[string]*listener{}
	}

	for addr, ln := range l.open {
		if secure, ok := want[addr]; !ok || secure != ln.tls {
			_ = ln.srv.Close()
			delete(l.open, addr)
		}
	}

	for addr, secure := range want {
		if _, ok := l.open[addr]; ok {
			continue
		}

		if ln := l.listen(addr, secure); ln != nil {
			l.open[addr] = ln
		}
	}
}

// Open lists the addresses served now.
func (l *Listeners) Open() map[string]bool {
	l.mu.Lock()
	defer l.mu.Unlock()

	out := map[string]bool{}
	for addr, ln := range l.open {
		out[addr] = ln.tls
	}

	return out
}

// Close stops every listener; later Syncs open none.
func (l *Listeners) Close() {
	l.mu.Lock()
	defer l.mu.Unlock()

	l.closed = true

	for addr, ln := range l.open {
		_ = ln.srv.Close()
		delete(l.open, addr)
	}
}

func (l *Listeners) listen(addr string, secure bool) *listener {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil
	}

	srv := &http.Server{Handler: http.NotFoundHandler(), ReadHeaderTimeout: 10 * time.Second}

	if secure {
		cert, err := l.defaultCert()
		if err != nil {
			_ = ln.Close()

			return nil
		}

		ln = tls.NewListener(ln, &tls.Config{Certificates: []tls.Certificate{*cert}, MinVersion: tls.VersionTLS12})
	}

	go func() { _ = srv.Serve(ln) }()

	return &listener{srv: srv, tls: secure}
}

// defaultCert is the stand-in's self-signed TRAEFIK DEFAULT CERT, made
// once; callers hold l.mu.
func (l *Listeners) defaultCert() (*tls.Certificate, error) {
	if l.cert != nil {
		return l.cert, nil
	}

	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}

	tpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: DefaultCertCN},
		DNSNames: []string{"traefik.default"}, NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(365 * 24 * time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}

	der, err := x509.CreateCertificate(rand.Reader, tpl, tpl, &key.PublicKey, key)
	if err != nil {
		return nil, err
	}

	l.cert = &tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}

	return l.cert, nil
}
