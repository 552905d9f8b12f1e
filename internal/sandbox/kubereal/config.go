package kubereal

import (
	"errors"
	"log/slog"
	"net"
	"net/netip"

	"github.com/siderolabs/crypto/x509"
	"github.com/siderolabs/talos/pkg/machinery/config/config"

	"github.com/ohmytalos/ohmytalos/internal/sandbox/kubereal/kubebin"
)

// Config is one cluster's control plane.
type Config struct {
	// Binaries are the programs to run (kubebin.Ensure).
	Binaries kubebin.Binaries
	// Dir holds etcd's data, the certificates, kubeconfigs and logs; it
	// must exist and be private to this control plane.
	Dir string

	// CA is the cluster's Kubernetes CA (secrets bundle Certs.K8s): it
	// signs the serving certificate and verifies client certificates, as
	// Talos' kube-apiserver --client-ca-file does.
	CA *x509.PEMEncodedCertificateAndKey
	// AggregatorCA (secrets bundle Certs.K8sAggregator) verifies the front
	// proxy; nil leaves request-header authentication off.
	AggregatorCA *x509.PEMEncodedCertificateAndKey
	// ServiceAccountKey (secrets bundle Certs.K8sServiceAccount) signs and
	// verifies service account tokens.
	ServiceAccountKey *x509.PEMEncodedKey
	// SecretboxKey (secrets bundle Secrets.SecretboxEncryptionSecret)
	// encrypts Secrets in etcd as Talos does; "" stores them unencrypted.
	SecretboxKey string

	// Endpoint is the cluster's control-plane endpoint URL: the service
	// account issuer and API audience, as in Talos.
	Endpoint string
	// ServiceCIDRs and PodCIDRs are cluster.network's subnets.
	ServiceCIDRs, PodCIDRs []string
	// AdvertiseAddress is the address in the kubernetes Service's
	// endpoints (default 127.0.0.1).
	AdvertiseAddress string
	// ServingIPs and ServingDNSNames go into the serving certificate
	// beside loopback, the kubernetes Service's names and its IP.
	ServingIPs      []net.IP
	ServingDNSNames []string

	// Admission configures admission plugins (cluster.apiServer.
	// admissionControl: Talos' default is PodSecurity with enforce
	// baseline, audit and warn restricted, kube-system exempt).
	Admission []AdmissionPlugin

	// Timing paces the simulated kubelets and controllers.
	Timing Timing

	Log *slog.Logger
}

// AdmissionPlugin is one entry of kube-apiserver's AdmissionConfiguration.
type AdmissionPlugin struct {
	Name          string
	Configuration map[string]any
}

func (c *Config) check() error {
	switch {
	case c.Dir == "":
		return errors.New("kubereal: Config.Dir is empty; give the control plane a state directory")
	case c.CA == nil || len(c.CA.Crt) == 0 || len(c.CA.Key) == 0:
		return errors.New("kubereal: Config.CA needs the cluster's Kubernetes CA certificate and key (secrets bundle Certs.K8s)")
	case c.ServiceAccountKey == nil || len(c.ServiceAccountKey.Key) == 0:
		return errors.New("kubereal: Config.ServiceAccountKey is empty; pass the secrets bundle's Certs.K8sServiceAccount")
	case len(c.ServiceCIDRs) == 0:
		return errors.New("kubereal: Config.ServiceCIDRs is empty; pass cluster.network.serviceSubnets")
	case c.Binaries.APIServer == "":
		return errors.New("kubereal: Config.Binaries is empty; build them with kubebin.Ensure")
	}

	for _, s := range c.ServiceCIDRs {
		if _, err := netip.ParsePrefix(s); err != nil {
			return errors.New("kubereal: service CIDR " + s + " is not a CIDR")
		}
	}

	return nil
}

// kubernetesServiceIP is the first address of the first service range, the
// kubernetes Service's ClusterIP.
func (c *Config) kubernetesServiceIP() net.IP {
	p := netip.MustParsePrefix(c.ServiceCIDRs[0])

	return net.IP(p.Masked().Addr().Next().AsSlice())
}

// AdmissionFromTalos converts a machine config's
// cluster.apiServer.admissionControl (config.APIServer.AdmissionControl).
func AdmissionFromTalos(ps []config.AdmissionPlugin) []AdmissionPlugin {
	out := make([]AdmissionPlugin, 0, len(ps))
	for _, p := range ps {
		out = append(out, AdmissionPlugin{Name: p.Name(), Configuration: p.Configuration()})
	}

	return out
}
