package kubereal

import (
	stdx509 "crypto/x509"
	"encoding/base64"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"time"

	"github.com/siderolabs/crypto/x509"
)

// certValidity is long enough for any sandbox session.
const certValidity = 365 * 24 * time.Hour

// issue signs a key pair with ca. server adds server auth (with the given
// names), otherwise it is a client certificate for cn in orgs.
func issue(ca *x509.PEMEncodedCertificateAndKey, cn string, orgs []string, server bool, dns []string, ips []net.IP) (*x509.KeyPair, error) {
	authority, err := x509.NewCertificateAuthorityFromCertificateAndKey(ca)
	if err != nil {
		return nil, fmt.Errorf("read the cluster's Kubernetes CA: %w", err)
	}

	usage := []stdx509.ExtKeyUsage{stdx509.ExtKeyUsageClientAuth}
	if server {
		usage = []stdx509.ExtKeyUsage{stdx509.ExtKeyUsageServerAuth}
	}

	opts := []x509.Option{
		x509.CommonName(cn),
		x509.NotAfter(time.Now().Add(certValidity)),
		x509.KeyUsage(stdx509.KeyUsageDigitalSignature | stdx509.KeyUsageKeyEncipherment),
		x509.ExtKeyUsage(usage),
	}

	if len(orgs) > 0 {
		opts = append(opts, x509.Organization(orgs...))
	}

	if server {
		opts = append(opts, x509.DNSNames(dns), x509.IPAddresses(ips))
	}

	kp, err := x509.NewKeyPair(authority, opts...)
	if err != nil {
		return nil, fmt.Errorf("issue the certificate for %s: %w", cn, err)
	}

	return kp, nil
}

// servingNames are the serving certificate's names: Talos' (siderolabs/talos
// internal/app/machined/pkg/controllers/secrets/kubernetes_cert_sans.go:
// the in-cluster names, localhost, the service IP, loopback) plus the
// configured addresses of the control planes.
func (c *Config) servingNames() ([]string, []net.IP) {
	dns := append([]string{"kubernetes", "kubernetes.default", "kubernetes.default.svc", "kubernetes.default.svc.cluster.local", "localhost"}, c.ServingDNSNames...)
	ips := append([]net.IP{net.IPv4(127, 0, 0, 1), net.IPv6loopback, c.kubernetesServiceIP()}, c.ServingIPs...)

	return dns, ips
}

// writeFile writes data privately and atomically.
func writeFile(path string, data []byte) error {
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, data, 0o600); err != nil {
		return err
	}

	return os.Rename(tmp, path)
}

// kubeconfig is a client's kubeconfig for server with a certificate from ca.
func kubeconfig(server string, caPEM []byte, kp *x509.KeyPair, user string) []byte {
	b64 := base64.StdEncoding.EncodeToString

	return fmt.Appendf(nil, `apiVersion: v1
kind: Config
clusters:
- name: sandbox
  cluster:
    server: %s
    certificate-authority-data: %s
users:
- name: %s
  user:
    client-certificate-data: %s
    client-key-data: %s
contexts:
- name: %s@sandbox
  context: {cluster: sandbox, user: %s}
current-context: %s@sandbox
`, server, b64(caPEM), user, b64(kp.CrtPEM), b64(kp.KeyPEM), user, user, user)
}

// writePKI writes every file the processes read and returns their paths.
func (c *Config) writePKI(apiURL string) (map[string]string, error) {
	dir := filepath.Join(c.Dir, "pki")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("create %s: %w", dir, err)
	}

	files := map[string][]byte{
		"ca.crt":              c.CA.Crt,
		"ca.key":              c.CA.Key,
		"service-account.key": c.ServiceAccountKey.Key,
	}

	dns, ips := c.servingNames()

	serving, err := issue(c.CA, "kube-apiserver", nil, true, dns, ips)
	if err != nil {
		return nil, err
	}

	files["apiserver.crt"], files["apiserver.key"] = serving.CrtPEM, serving.KeyPEM

	// Talos' controller-manager and scheduler kubeconfigs carry these
	// identities, which the bootstrap RBAC policy binds.
	for name, cn := range map[string]string{
		"controller-manager.kubeconfig": "system:kube-controller-manager",
		"scheduler.kubeconfig":          "system:kube-scheduler",
	} {
		kp, err := issue(c.CA, cn, nil, false, nil, nil)
		if err != nil {
			return nil, err
		}

		files[name] = kubeconfig(apiURL, c.CA.Crt, kp, cn)
	}

	if c.AggregatorCA != nil && len(c.AggregatorCA.Key) > 0 {
		kp, err := issue(c.AggregatorCA, "front-proxy-client", nil, false, nil, nil)
		if err != nil {
			return nil, err
		}

		files["aggregator-ca.crt"] = c.AggregatorCA.Crt
		files["front-proxy-client.crt"], files["front-proxy-client.key"] = kp.CrtPEM, kp.KeyPEM
	}

	paths := map[string]string{}

	for name, data := range files {
		p := filepath.Join(dir, name)
		if err := writeFile(p, data); err != nil {
			return nil, fmt.Errorf("write %s: %w", p, err)
		}

		paths[name] = p
	}

	return paths, nil
}

// writeServing replaces the serving key pair; the key is written first so
// that a reload never pairs a new certificate with the old key for long.
func writeServing(dir string, kp *x509.KeyPair) error {
	p := filepath.Join(dir, "pki")
	if err := writeFile(filepath.Join(p, "apiserver.key"), kp.KeyPEM); err != nil {
		return fmt.Errorf("write the serving key: %w", err)
	}

	if err := writeFile(filepath.Join(p, "apiserver.crt"), kp.CrtPEM); err != nil {
		return fmt.Errorf("write the serving certificate: %w", err)
	}

	return nil
}
