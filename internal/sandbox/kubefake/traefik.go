package kubefake

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

// traefikImage is the image the Traefik stand-in recognises: the traefik
// chart runs docker.io/traefik:<appVersion> (traefik/traefik-helm-chart
// traefik/values.yaml, image.registry docker.io, image.repository traefik).
const traefikImage = "traefik"

// traefikDefaultCertCN is the subject of the self-signed certificate
// Traefik serves when no other matches (traefik/traefik pkg/tls/generate,
// DefaultDomain).
const traefikDefaultCertCN = "TRAEFIK DEFAULT CERT"

// ingressListeners are the Traefik stand-in's node-port listeners: what
// Cilium's kube-proxy replacement exposes on every node for a NodePort or
// LoadBalancer Service, answered as Traefik answers with no route
// configured: its default router is http.NotFoundHandler, "404 page not
// found" (traefik/traefik pkg/server/router/router.go,
// BuildDefaultHTTPRouter).
type ingressListeners struct {
	mu   sync.Mutex
	open map[string]*ingressListener // "ip:port" -> listener
	cert *tls.Certificate
}

type ingressListener struct {
	srv *http.Server
	tls bool
}

// ingressWantLocked lists the addresses the stand-in serves: every
// node's ExternalIP (in the sandbox the server's loopback IPv4, where the
// load balancer's health checks and connections arrive) at every node
// port of a NodePort or LoadBalancer Service that selects a Ready pod of
// the traefik image; true for a TLS port (websecure, or 443).
func (s *Server) ingressWantLocked() map[string]bool {
	var ips []string
	for _, n := range s.sortedLocked("/nodes") {
		for _, a := range listAt(n, "status", "addresses") {
			if str(a, "type") == "ExternalIP" && str(a, "address") != "" {
				ips = append(ips, str(a, "address"))
			}
		}
	}
	want := map[string]bool{}
	if len(ips) == 0 {
		return want
	}
	pods := s.sortedLocked("/pods")
	for _, svc := range s.sortedLocked("/services") {
		if t := str(svc, "spec", "type"); t != "NodePort" && t != "LoadBalancer" {
			continue
		}
		if !selectsReadyTraefik(svc, pods) {
			continue
		}
		for _, p := range listAt(svc, "spec", "ports") {
			node, ok := intAt(p, "nodePort")
			if !ok || node == 0 {
				continue
			}
			port, _ := intAt(p, "port")
			secure := str(p, "name") == "websecure" || str(p, "targetPort") == "websecure" || port == 443
			for _, ip := range ips {
				want[net.JoinHostPort(ip, strconv.FormatInt(node, 10))] = secure
			}
		}
	}
	return want
}

func selectsReadyTraefik(svc obj, pods []obj) bool {
	sel := strMap(svc, "spec", "selector")
	if len(sel) == 0 {
		return false
	}
	ns := str(svc, "metadata", "namespace")
	for _, p := range pods {
		if str(p, "metadata", "namespace") != ns || str(p, "metadata", "deletionTimestamp") != "" ||
			!podReady(p) || !usesImage(mapAt(p, "spec"), traefikImage) {
			continue
		}
		labels := strMap(p, "metadata", "labels")
		match := true
		for k, v := range sel {
			if labels[k] != v {
				match = false
			}
		}
		if match {
			return true
		}
	}
	return false
}

// syncIngress opens and closes the stand-in's listeners to match the
// cluster; an address that cannot be bound is tried again next pass.
func (s *Server) syncIngress() {
	s.mu.Lock()
	want := s.ingressWantLocked()
	s.mu.Unlock()
	in := &s.ingress
	in.mu.Lock()
	defer in.mu.Unlock()
	if in.open == nil {
		in.open = map[string]*ingressListener{}
	}
	for addr, l := range in.open {
		if secure, ok := want[addr]; !ok || secure != l.tls {
			_ = l.srv.Close()
			delete(in.open, addr)
		}
	}
	for addr, secure := range want {
		if _, ok := in.open[addr]; ok {
			continue
		}
		if l := in.listen(addr, secure); l != nil {
			in.open[addr] = l
		}
	}
}

func (in *ingressListeners) listen(addr string, secure bool) *ingressListener {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil
	}
	srv := &http.Server{Handler: http.NotFoundHandler(), ReadHeaderTimeout: 10 * time.Second}
	if secure {
		cert, err := in.defaultCert()
		if err != nil {
			_ = ln.Close()
			return nil
		}
		ln = tls.NewListener(ln, &tls.Config{Certificates: []tls.Certificate{*cert}, MinVersion: tls.VersionTLS12})
	}
	go func() { _ = srv.Serve(ln) }()
	return &ingressListener{srv: srv, tls: secure}
}

// defaultCert is the stand-in's self-signed TRAEFIK DEFAULT CERT, made once.
func (in *ingressListeners) defaultCert() (*tls.Certificate, error) {
	if in.cert != nil {
		return in.cert, nil
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	tpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: traefikDefaultCertCN},
		DNSNames: []string{"traefik.default"}, NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(365 * 24 * time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tpl, tpl, &key.PublicKey, key)
	if err != nil {
		return nil, err
	}
	in.cert = &tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}
	return in.cert, nil
}

// closeIngress stops every listener of the stand-in.
func (s *Server) closeIngress() {
	in := &s.ingress
	in.mu.Lock()
	defer in.mu.Unlock()
	for addr, l := range in.open {
		_ = l.srv.Close()
		delete(in.open, addr)
	}
}
