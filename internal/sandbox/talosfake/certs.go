package talosfake

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/tls"
	stdx509 "crypto/x509"
	"encoding/base64"
	"errors"
	"fmt"
	"net"
	"time"

	"github.com/siderolabs/crypto/x509"
	"go.yaml.in/yaml/v3"
)

// certValidity is how long the certificates a fake node issues stay valid:
// long enough for any sandbox session, short enough to look like Talos' own.
const certValidity = 24 * time.Hour

// issueServerCert signs the Talos API server certificate for a node from the
// OS CA (machine.ca), with the node's addresses as IP SANs, like apid's.
func issueServerCert(osCA *x509.PEMEncodedCertificateAndKey, hostname string, ips []net.IP) (*tls.Certificate, error) {
	if osCA == nil || len(osCA.Key) == 0 {
		return nil, errors.New("the OS CA key is unknown: a worker gets its certificate from a control plane of its cluster; start one first")
	}

	ca, err := x509.NewCertificateAuthorityFromCertificateAndKey(osCA)
	if err != nil {
		return nil, fmt.Errorf("read OS CA from machine.ca: %w", err)
	}

	var names []string
	if hostname != "" {
		names = []string{hostname}
	}

	kp, err := x509.NewKeyPair(ca,
		x509.CommonName(hostname),
		x509.IPAddresses(ips),
		x509.DNSNames(names),
		x509.NotAfter(time.Now().Add(certValidity)),
		x509.KeyUsage(stdx509.KeyUsageDigitalSignature),
		x509.ExtKeyUsage([]stdx509.ExtKeyUsage{stdx509.ExtKeyUsageServerAuth}),
	)
	if err != nil {
		return nil, fmt.Errorf("issue API server certificate from the OS CA: %w", err)
	}

	return kp.Certificate, nil
}

// clientCAPool is the pool apid verifies client certificates against:
// machine.ca plus machine.acceptedCAs.
func clientCAPool(cfg *nodeConfig) (*stdx509.CertPool, error) {
	pool := stdx509.NewCertPool()

	if !pool.AppendCertsFromPEM(cfg.osCA.Crt) {
		return nil, errors.New("machine.ca.crt is not a PEM certificate")
	}

	for _, extra := range cfg.acceptedCAs {
		pool.AppendCertsFromPEM(extra)
	}

	return pool, nil
}

// kubeconfigFile is the subset of a client-go kubeconfig that Talos writes.
type kubeconfigFile struct {
	APIVersion     string              `yaml:"apiVersion"`
	Kind           string              `yaml:"kind"`
	Clusters       []kubeconfigCluster `yaml:"clusters"`
	Users          []kubeconfigUser    `yaml:"users"`
	Contexts       []kubeconfigContext `yaml:"contexts"`
	CurrentContext string              `yaml:"current-context"`
}

type kubeconfigCluster struct {
	Name    string `yaml:"name"`
	Cluster struct {
		Server                   string `yaml:"server"`
		CertificateAuthorityData string `yaml:"certificate-authority-data"`
	} `yaml:"cluster"`
}

type kubeconfigUser struct {
	Name string `yaml:"name"`
	User struct {
		ClientCertificateData string `yaml:"client-certificate-data"`
		ClientKeyData         string `yaml:"client-key-data"`
	} `yaml:"user"`
}

type kubeconfigContext struct {
	Name    string `yaml:"name"`
	Context struct {
		Cluster   string `yaml:"cluster"`
		Namespace string `yaml:"namespace"`
		User      string `yaml:"user"`
	} `yaml:"context"`
}

// adminKubeconfig renders an admin kubeconfig the way Talos does
// (user admin@CLUSTER, group system:masters), signed by cluster.ca.
func adminKubeconfig(k8sCA *x509.PEMEncodedCertificateAndKey, clusterName, server string) ([]byte, error) {
	if k8sCA == nil || len(k8sCA.Key) == 0 {
		return nil, errors.New("cluster.ca has no key: only a control plane config carries the Kubernetes CA key")
	}

	ca, err := x509.NewCertificateAuthorityFromCertificateAndKey(k8sCA)
	if err != nil {
		return nil, fmt.Errorf("read Kubernetes CA from cluster.ca: %w", err)
	}

	kp, err := x509.NewKeyPair(ca,
		x509.CommonName("admin"),
		x509.Organization("system:masters"),
		x509.NotAfter(time.Now().Add(certValidity)),
		x509.KeyUsage(stdx509.KeyUsageDigitalSignature),
		x509.ExtKeyUsage([]stdx509.ExtKeyUsage{stdx509.ExtKeyUsageClientAuth}),
	)
	if err != nil {
		return nil, fmt.Errorf("issue admin client certificate: %w", err)
	}

	ctxName := "admin@" + clusterName
	enc := base64.StdEncoding.EncodeToString

	var cl kubeconfigCluster
	cl.Name = clusterName
	cl.Cluster.Server = server
	cl.Cluster.CertificateAuthorityData = enc(k8sCA.Crt)

	var u kubeconfigUser
	u.Name = ctxName
	u.User.ClientCertificateData = enc(kp.CrtPEM)
	u.User.ClientKeyData = enc(kp.KeyPEM)

	var c kubeconfigContext
	c.Name = ctxName
	c.Context.Cluster = clusterName
	c.Context.Namespace = "default"
	c.Context.User = ctxName

	out, err := yaml.Marshal(kubeconfigFile{
		APIVersion:     "v1",
		Kind:           "Config",
		Clusters:       []kubeconfigCluster{cl},
		Users:          []kubeconfigUser{u},
		Contexts:       []kubeconfigContext{c},
		CurrentContext: ctxName,
	})
	if err != nil {
		return nil, fmt.Errorf("encode kubeconfig: %w", err)
	}

	return out, nil
}

// tarGzipSingle wraps one file in a .tar.gz, the framing machined uses for the
// Kubeconfig stream (the client's extractKubeconfig gunzips and untars it).
func tarGzipSingle(name string, data []byte) ([]byte, error) {
	var buf bytes.Buffer

	gz := gzip.NewWriter(&buf)
	tw := tar.NewWriter(gz)

	if err := tw.WriteHeader(&tar.Header{
		Name:     name,
		Mode:     0o600,
		Size:     int64(len(data)),
		ModTime:  time.Now(),
		Typeflag: tar.TypeReg,
	}); err != nil {
		return nil, fmt.Errorf("write tar header: %w", err)
	}

	if _, err := tw.Write(data); err != nil {
		return nil, fmt.Errorf("write tar body: %w", err)
	}

	if err := tw.Close(); err != nil {
		return nil, fmt.Errorf("close tar: %w", err)
	}

	if err := gz.Close(); err != nil {
		return nil, fmt.Errorf("close gzip: %w", err)
	}

	return buf.Bytes(), nil
}
