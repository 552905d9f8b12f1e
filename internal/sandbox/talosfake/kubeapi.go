package talosfake

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"strings"

	"github.com/siderolabs/talos/pkg/machinery/config/configloader"
)

// KubernetesPort is the kube-apiserver port the sandbox serves on.
const KubernetesPort = 6443

// Well-known node labels and taints, as Talos and the kubelet set them.
const (
	labelControlPlane  = "node-role.kubernetes.io/control-plane"
	labelExcludeFromLB = "node.kubernetes.io/exclude-from-external-load-balancers"
)

// errNoKubernetes is KubeErr on a cluster run without a control plane
// to serve (ClusterOptions.RealKubernetes nil).
var errNoKubernetes = errors.New("kubernetes API: this sandbox runs no Kubernetes control plane (talosfake.ClusterOptions.RealKubernetes is nil); start the sandbox with the binaries from kubebin.Ensure")

// kubeAPI is one control plane's PublicIP:6443: a listener that forwards
// each connection to the cluster's real kube-apiserver.
type kubeAPI struct {
	lis  net.Listener
	done chan struct{}
}

// KubernetesEndpoint is host:port of the Kubernetes API this node serves
// ("" unless it is a control plane of a bootstrapped cluster with a
// public IP, run with ClusterOptions.RealKubernetes).
func (n *Node) KubernetesEndpoint() string {
	n.cluster.mu.Lock()
	defer n.cluster.mu.Unlock()

	if n.kube == nil {
		return ""
	}

	return n.kube.lis.Addr().String()
}

// KubeErr reports why the Kubernetes API could not start, if it could not.
func (n *Node) KubeErr() error {
	n.cluster.mu.Lock()
	defer n.cluster.mu.Unlock()

	return n.kubeErr
}

// startKubeAPILocked runs on every etcd member at each membership change:
// it starts the node's Kubernetes API forwarder once (a bind failure
// leaves the cluster without it, as a crash-looping kube-apiserver would,
// reported by KubeErr) and brings the kubelets up to date. Called with
// cluster.mu held.
func (n *Node) startKubeAPILocked() {
	if n.cluster.opts.RealKubernetes == nil {
		n.kubeErr = errNoKubernetes

		return
	}

	n.startRealKubeLocked()
}

// stop closes the forwarder; the control plane lives on with etcd.
func (k *kubeAPI) stop() {
	_ = k.lis.Close() //nolint:errcheck // stop accepting
	<-k.done
}

// kubeSettings are the machine config fields the Kubernetes side needs.
type kubeSettings struct {
	apiServerIPs  []netip.Addr
	dnsDomain     string
	certSANs      []string
	externalCloud bool
	kubeletImage  string
}

func loadKubeSettings(raw []byte) (kubeSettings, error) {
	provider, err := configloader.NewFromBytes(raw)
	if err != nil {
		return kubeSettings{}, fmt.Errorf("kubernetes API: load machine config: %w", err)
	}

	cl := provider.Cluster()
	ks := kubeSettings{certSANs: cl.CertSANs()}

	if nw := cl.Network(); nw != nil {
		ks.dnsDomain = nw.DNSDomain()

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

// imageTag is the tag of an image reference ("ghcr.io/siderolabs/kubelet:v1.35.0"
// -> "v1.35.0"), or fallback without one.
func imageTag(image, fallback string) string {
	if i := strings.LastIndex(image, "@"); i >= 0 {
		image = image[:i]
	}

	if i := strings.LastIndex(image, ":"); i > strings.LastIndex(image, "/") {
		return image[i+1:]
	}

	return fallback
}
