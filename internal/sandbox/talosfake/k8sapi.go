package talosfake

import (
	"context"
	"crypto/tls"
	stdx509 "crypto/x509"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strconv"
	"time"

	"github.com/siderolabs/crypto/x509"
	"github.com/siderolabs/talos/pkg/machinery/config/configloader"
)

// KubernetesPort is the kube-apiserver port the sandbox serves on.
const KubernetesPort = 6443

// kubeAPI is one control plane's kube-apiserver: a TLS listener on
// PublicIP:6443 in front of the Talos cluster's shared kubefake.Server (one
// etcd, many API servers).
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

// KubeErr reports why the sandbox Kubernetes API could not start, if it could not.
func (n *Node) KubeErr() error {
	n.cluster.mu.Lock()
	defer n.cluster.mu.Unlock()

	return n.kubeErr
}

// startKubeAPILocked runs on every etcd member at each membership change:
// it starts the node's kube-apiserver once (a bind failure leaves the
// cluster without this API server, as a crash-looping kube-apiserver would,
// reported by KubeErr) and brings the kubelets' registrations up to date.
// Called with cluster.mu held.
func (n *Node) startKubeAPILocked() {
	if n.cluster.opts.RealKubernetes != nil {
		n.startRealKubeLocked()

		return
	}

	kc, err := n.cluster.kubeClusterLocked(n)
	if err != nil {
		n.kubeErr = err

		return
	}

	n.cluster.syncKubeletsLocked(n.cfg.clusterID, kc)

	if n.cfg.controlPlane() && talosAPIAccessEnabled(n.cfg.raw) {
		if err := kc.srv.InstallCRD(talosServiceAccountCRD()); err != nil {
			n.kubeErr = err

			return
		}
	}

	if n.kube != nil || n.kubeErr != nil || n.opts.PublicIP == "" || n.ctx.Err() != nil {
		return
	}

	sk, err := loadKubeSettings(n.cfg.raw)
	if err != nil {
		n.kubeErr = err

		return
	}

	dns, ips := kubeCertSANs(n, sk)

	cert, err := issueKubeServingCert(n.cfg.k8sCA, dns, ips)
	if err != nil {
		n.kubeErr = err

		return
	}

	addr := net.JoinHostPort(n.opts.PublicIP, strconv.Itoa(KubernetesPort))

	inner, err := net.Listen("tcp", addr)
	if err != nil {
		n.kubeErr = fmt.Errorf("fake kube-apiserver on %s: %w", addr, err)

		return
	}

	// Client certificates are requested, not required, and verified by the
	// server: kube-apiserver authenticates anonymous requests too.
	lis := tls.NewListener(n.admitPort(inner, KubernetesPort), &tls.Config{
		MinVersion:   tls.VersionTLS12,
		Certificates: []tls.Certificate{*cert},
		ClientAuth:   tls.RequestClientCert,
	})

	k := &kubeAPI{node: n, lis: lis, done: make(chan struct{})}
	// Handshake failures (a client that dropped, a refused firewall) go to
	// the sandbox's log, not the terminal the wizard draws on.
	k.srv = &http.Server{Handler: kc.srv, ReadHeaderTimeout: 10 * time.Second,
		ErrorLog: slog.NewLogLogger(n.cluster.opts.Logger.Handler(), slog.LevelDebug)}
	n.kube = k

	go func() {
		defer close(k.done)

		_ = k.srv.Serve(lis) //nolint:errcheck // ends with ErrServerClosed on stop
	}()
}

// stop closes this API server; the cluster's store lives on with etcd.
func (k *kubeAPI) stop() {
	if k.srv == nil { // a forwarder to the real kube-apiserver
		_ = k.lis.Close() //nolint:errcheck // stop accepting
		<-k.done

		return
	}

	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()

	if err := k.srv.Shutdown(ctx); err != nil {
		_ = k.srv.Close() //nolint:errcheck // forced close after a failed graceful stop
	}

	<-k.done
}

// kubeSettings are the machine config fields the Kubernetes side needs.
type kubeSettings struct {
	podCIDRs      []netip.Prefix
	serviceCIDRs  []netip.Prefix
	apiServerIPs  []netip.Addr
	dnsDomain     string
	certSANs      []string
	externalCloud bool
	kubeletImage  string
}

func loadKubeSettings(raw []byte) (kubeSettings, error) {
	provider, err := configloader.NewFromBytes(raw)
	if err != nil {
		return kubeSettings{}, fmt.Errorf("fake kube-apiserver: load machine config: %w", err)
	}

	cl := provider.Cluster()
	ks := kubeSettings{certSANs: cl.CertSANs()}

	if nw := cl.Network(); nw != nil {
		ks.dnsDomain = nw.DNSDomain()

		for _, c := range nw.PodCIDRs() {
			if p, err := netip.ParsePrefix(c); err == nil {
				ks.podCIDRs = append(ks.podCIDRs, p)
			}
		}

		for _, c := range nw.ServiceCIDRs() {
			if p, err := netip.ParsePrefix(c); err == nil {
				ks.serviceCIDRs = append(ks.serviceCIDRs, p)
			}
		}

		if ips, err := nw.APIServerIPs(); err == nil {
			ks.apiServerIPs = ips
		}
	}

	if ec := cl.ExternalCloudProvider(); ec != nil {
		ks.externalCloud = ec.Enabled()
	}

	if m := provider.Machine(); m != nil && m.Kubelet() != nil {
		ks.kubeletImage = m.Kubelet().Image()
	}

	return ks, nil
}

// kubeCertSANs are the apiserver certificate's names as Talos' Kubernetes
// cert SANs controller builds them (siderolabs/talos
// internal/app/machined/pkg/controllers/secrets/kubernetes_cert_sans.go):
// the in-cluster names, localhost, the endpoint host,
// cluster.apiServer.certSANs, the kube-apiserver service IP, the node's
// hostname and addresses, and loopback.
func kubeCertSANs(n *Node, ks kubeSettings) ([]string, []net.IP) {
	dns := []string{"kubernetes", "kubernetes.default", "kubernetes.default.svc", "localhost"}
	if ks.dnsDomain != "" {
		dns = append(dns, "kubernetes.default.svc."+ks.dnsDomain)
	}

	var ips []net.IP

	add := func(s string) {
		if s == "" {
			return
		}

		if ip := net.ParseIP(s); ip != nil {
			ips = append(ips, ip)
		} else {
			dns = append(dns, s)
		}
	}

	if ep := n.cfg.endpoint; ep != nil {
		add(endpointHost(ep))
	}

	for _, s := range ks.certSANs {
		add(s)
	}

	for _, ip := range ks.apiServerIPs {
		add(ip.String())
	}

	add(n.opts.Name)

	if n.cfg.hostname != "" && n.cfg.hostname != n.opts.Name {
		add(n.cfg.hostname)
	}

	for _, s := range []string{n.opts.PublicIP, n.opts.PrivateIP, "127.0.0.1", "::1"} {
		add(s)
	}

	return dns, ips
}

func endpointHost(u *url.URL) string { return u.Hostname() }

func issueKubeServingCert(k8sCA *x509.PEMEncodedCertificateAndKey, dns []string, ips []net.IP) (*tls.Certificate, error) {
	if k8sCA == nil || len(k8sCA.Key) == 0 {
		return nil, errors.New("fake kube-apiserver: cluster.ca has no key in this config")
	}

	ca, err := x509.NewCertificateAuthorityFromCertificateAndKey(k8sCA)
	if err != nil {
		return nil, fmt.Errorf("fake kube-apiserver: read cluster.ca: %w", err)
	}

	kp, err := x509.NewKeyPair(ca,
		x509.CommonName("kube-apiserver"),
		x509.IPAddresses(ips),
		x509.DNSNames(dns),
		x509.NotAfter(time.Now().Add(certValidity)),
		x509.KeyUsage(stdx509.KeyUsageDigitalSignature|stdx509.KeyUsageKeyEncipherment),
		x509.ExtKeyUsage([]stdx509.ExtKeyUsage{stdx509.ExtKeyUsageServerAuth}),
	)
	if err != nil {
		return nil, fmt.Errorf("fake kube-apiserver: issue serving certificate: %w", err)
	}

	return kp.Certificate, nil
}

// kubeClientCAs is the pool client certificates must chain to: cluster.ca.
func kubeClientCAs(k8sCA *x509.PEMEncodedCertificateAndKey) (*stdx509.CertPool, error) {
	pool := stdx509.NewCertPool()
	if k8sCA == nil || !pool.AppendCertsFromPEM(k8sCA.Crt) {
		return nil, errors.New("fake kube-apiserver: cluster.ca has no certificate in this config")
	}

	return pool, nil
}
