package talosfake

import (
	"context"
	"crypto/tls"
	stdx509 "crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/siderolabs/crypto/x509"
)

// KubernetesPort is the kube-apiserver port the sandbox serves on.
const KubernetesPort = 6443

// kubeAPI is a tiny Kubernetes API served on each control plane of a
// bootstrapped cluster: enough for the product to see its nodes the way
// kubectl would.
type kubeAPI struct {
	node *Node
	srv  *http.Server
	lis  net.Listener
	done chan struct{}
}

// KubernetesEndpoint is host:port of the sandbox Kubernetes API this node
// serves ("" unless it is a control plane of a bootstrapped cluster with a
// public IP).
func (n *Node) KubernetesEndpoint() string {
	n.cluster.mu.Lock()
	defer n.cluster.mu.Unlock()

	if n.kube == nil {
		return ""
	}

	return n.kube.lis.Addr().String()
}

// startKubeAPILocked starts the Kubernetes API once the node is an etcd
// member. Called with cluster.mu held; a no-op when already serving. A bind failure leaves the cluster bootstrapped without an
// API (as a crash-looping kube-apiserver would) and is reported by KubeErr.
func (n *Node) startKubeAPILocked() {
	if n.kube != nil || n.kubeErr != nil || n.opts.PublicIP == "" || n.ctx.Err() != nil {
		return
	}

	cert, err := issueKubeServingCert(n.cfg.k8sCA, n.opts)
	if err != nil {
		n.kubeErr = err

		return
	}

	pool := stdx509.NewCertPool()
	pool.AppendCertsFromPEM(n.cfg.k8sCA.Crt)

	addr := net.JoinHostPort(n.opts.PublicIP, strconv.Itoa(KubernetesPort))

	lis, err := tls.Listen("tcp", addr, &tls.Config{
		MinVersion:   tls.VersionTLS12,
		Certificates: []tls.Certificate{*cert},
		ClientCAs:    pool,
		ClientAuth:   tls.VerifyClientCertIfGiven,
	})
	if err != nil {
		n.kubeErr = fmt.Errorf("fake kube-apiserver on %s: %w", addr, err)

		return
	}

	k := &kubeAPI{node: n, lis: lis, done: make(chan struct{})}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /version", k.version)
	mux.HandleFunc("GET /api/v1/nodes", k.authenticated(k.nodes))
	mux.HandleFunc("GET /api/v1/namespaces/kube-system/configmaps", k.authenticated(k.emptyConfigMaps))
	mux.HandleFunc("/", k.notFound)

	k.srv = &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	n.kube = k

	go func() {
		defer close(k.done)

		_ = k.srv.Serve(lis) //nolint:errcheck // ends with ErrServerClosed on stop
	}()
}

func (k *kubeAPI) stop() {
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()

	if err := k.srv.Shutdown(ctx); err != nil {
		_ = k.srv.Close() //nolint:errcheck // forced close after a failed graceful stop
	}

	<-k.done
}

// KubeErr reports why the sandbox Kubernetes API could not start, if it could not.
func (n *Node) KubeErr() error {
	n.cluster.mu.Lock()
	defer n.cluster.mu.Unlock()

	return n.kubeErr
}

func issueKubeServingCert(k8sCA *x509.PEMEncodedCertificateAndKey, o NodeOptions) (*tls.Certificate, error) {
	if k8sCA == nil || len(k8sCA.Key) == 0 {
		return nil, errors.New("fake kube-apiserver: cluster.ca has no key in this config")
	}

	ca, err := x509.NewCertificateAuthorityFromCertificateAndKey(k8sCA)
	if err != nil {
		return nil, fmt.Errorf("fake kube-apiserver: read cluster.ca: %w", err)
	}

	var ips []net.IP

	for _, s := range []string{o.PublicIP, o.PrivateIP, "10.96.0.1", "127.0.0.1"} {
		if ip := net.ParseIP(s); ip != nil {
			ips = append(ips, ip)
		}
	}

	kp, err := x509.NewKeyPair(ca,
		x509.CommonName("kube-apiserver"),
		x509.IPAddresses(ips),
		x509.DNSNames([]string{"kubernetes", "kubernetes.default", "kubernetes.default.svc", "localhost", o.Name}),
		x509.NotAfter(time.Now().Add(certValidity)),
		x509.KeyUsage(stdx509.KeyUsageDigitalSignature|stdx509.KeyUsageKeyEncipherment),
		x509.ExtKeyUsage([]stdx509.ExtKeyUsage{stdx509.ExtKeyUsageServerAuth}),
	)
	if err != nil {
		return nil, fmt.Errorf("fake kube-apiserver: issue serving certificate: %w", err)
	}

	return kp.Certificate, nil
}

// authenticated requires a client certificate from the cluster CA; the
// kube-apiserver answers anonymous requests to these paths with 401.
func (k *kubeAPI) authenticated(h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if r.TLS == nil || len(r.TLS.VerifiedChains) == 0 {
			writeStatus(w, http.StatusUnauthorized, "Unauthorized", "Unauthorized")

			return
		}

		h(w, r)
	}
}

func (k *kubeAPI) version(w http.ResponseWriter, _ *http.Request) {
	k.node.cluster.mu.Lock()
	v := k.node.cfg.k8sVersion
	k.node.cluster.mu.Unlock()

	major, minor := "", ""
	if parts := strings.SplitN(strings.TrimPrefix(v, "v"), ".", 3); len(parts) >= 2 {
		major, minor = parts[0], parts[1]
	}

	writeJSON(w, http.StatusOK, map[string]string{
		"major":      major,
		"minor":      minor,
		"gitVersion": v,
		"goVersion":  "go1.26",
		"compiler":   "gc",
		"platform":   "linux/amd64",
	})
}

func (k *kubeAPI) emptyConfigMaps(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusOK, map[string]any{
		"kind":       "ConfigMapList",
		"apiVersion": "v1",
		"metadata":   map[string]string{"resourceVersion": "1"},
		"items":      []any{},
	})
}

func (k *kubeAPI) notFound(w http.ResponseWriter, r *http.Request) {
	writeStatus(w, http.StatusNotFound, "NotFound", fmt.Sprintf("the server could not find the requested resource (%s %s)", r.Method, r.URL.Path))
}

func writeStatus(w http.ResponseWriter, code int, reason, msg string) {
	writeJSON(w, code, map[string]any{
		"kind":       "Status",
		"apiVersion": "v1",
		"metadata":   map[string]any{},
		"status":     "Failure",
		"message":    msg,
		"reason":     reason,
		"code":       code,
	})
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(v) //nolint:errcheck // the client went away
}
