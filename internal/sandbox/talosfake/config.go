package talosfake

import (
	"errors"
	"fmt"
	"maps"
	"net/netip"
	"net/url"

	"github.com/siderolabs/crypto/x509"
	"github.com/siderolabs/talos/pkg/machinery/config/config"
	"github.com/siderolabs/talos/pkg/machinery/config/configloader"
	"github.com/siderolabs/talos/pkg/machinery/config/machine"
)

// nodeConfig is what a fake node needs from its Talos machine config.
type nodeConfig struct {
	// maintenance is set when the node has no machine config at all.
	maintenance bool
	raw         []byte
	machineType machine.Type
	clusterID   string
	clusterName string
	endpoint    *url.URL
	hostname    string

	// osCA is machine.ca: a control plane carries the key, a worker only the
	// certificate (generate.Input writes the key into control plane configs only).
	osCA        *x509.PEMEncodedCertificateAndKey
	acceptedCAs [][]byte
	// k8sCA is cluster.ca, used to sign the admin kubeconfig.
	k8sCA *x509.PEMEncodedCertificateAndKey

	vip     netip.Addr
	vipLink string
	hasVIP  bool
	// vipHCloudToken is the HCloudVIPConfig's apiToken; vipHCloud tells an
	// HCloud VIP (claimed through the Hetzner API) from a Layer 2 one.
	vipHCloud      bool
	vipHCloudToken string
	k8sVersion     string
	// kubeletVersion is the tag of machine.kubelet.image.
	kubeletVersion string
	// etcdCA tells whether cluster.etcd.ca is set (Bootstrap refuses without it).
	etcdCA    bool
	labels    map[string]string
	taints    map[string]string
	schedCPOK bool
	// routes are the routes the config sets (routes.go).
	routes []cfgRoute
}

func (c *nodeConfig) controlPlane() bool {
	return c.machineType == machine.TypeControlPlane || c.machineType == machine.TypeInit
}

// parseNodeConfig reads a machine config (multi-doc YAML) with machinery's loader.
func parseNodeConfig(raw []byte) (*nodeConfig, error) {
	provider, err := configloader.NewFromBytes(raw)
	if err != nil {
		return nil, fmt.Errorf("load machine config: %w", err)
	}

	if provider.RawV1Alpha1() == nil || provider.Machine() == nil || provider.Cluster() == nil {
		return nil, errors.New("machine config has no v1alpha1 document: a Talos node needs machine and cluster sections")
	}

	m, cl := provider.Machine(), provider.Cluster()

	nc := &nodeConfig{
		raw:         append([]byte(nil), raw...),
		machineType: m.Type(),
		clusterID:   cl.ID(),
		clusterName: cl.Name(),
		endpoint:    cl.Endpoint(),
		labels:      map[string]string{},
		taints:      map[string]string{},
		schedCPOK:   cl.ScheduleOnControlPlanes(),
	}

	if h := provider.NetworkHostnameConfig(); h != nil {
		nc.hostname = h.Hostname()
	}

	if nc.clusterID == "" {
		// Old configs have no cluster.id: the cluster name is the only key left.
		nc.clusterID = "name:" + nc.clusterName
	}

	if m.Security() == nil || m.Security().IssuingCA() == nil || len(m.Security().IssuingCA().Crt) == 0 {
		return nil, errors.New("machine config has no machine.ca certificate: the Talos API cannot serve TLS without the OS CA")
	}

	nc.osCA = m.Security().IssuingCA()

	for _, ca := range m.Security().AcceptedCAs() {
		if ca != nil && len(ca.Crt) > 0 {
			nc.acceptedCAs = append(nc.acceptedCAs, ca.Crt)
		}
	}

	if cl.IssuingCA() != nil && len(cl.IssuingCA().Crt) > 0 {
		nc.k8sCA = cl.IssuingCA()
	}

	if api := cl.APIServer(); api != nil {
		// registry.k8s.io/kube-apiserver:v1.35.0 -> v1.35.0
		nc.k8sVersion = imageTag(api.Image(), "")
	}

	if k := m.Kubelet(); k != nil {
		nc.kubeletVersion = imageTag(k.Image(), "")
	}

	nc.etcdCA = cl.Etcd() != nil && cl.Etcd().CA() != nil

	maps.Copy(nc.labels, m.NodeLabels())
	maps.Copy(nc.taints, m.NodeTaints())

	nc.readVIP(provider.NetworkVirtualIPConfigs(), m)
	nc.readRoutes(m, provider.NetworkCommonLinkConfigs())

	return nc, nil
}

// readVIP takes the first VIP document (HCloudVIPConfig or Layer2VIPConfig,
// config/types/network), falling back to a legacy machine.network.interfaces[].vip.
func (nc *nodeConfig) readVIP(docs []config.NetworkVirtualIPConfig, m config.MachineConfig) {
	for _, d := range docs {
		if d.VIP().IsValid() {
			nc.vip, nc.vipLink, nc.hasVIP = d.VIP(), d.Link(), true

			if h, ok := d.(config.NetworkHCloudVIPConfig); ok {
				nc.vipHCloud, nc.vipHCloudToken = true, h.HCloudAPIToken()
			}

			return
		}
	}

	if m.Network() == nil {
		return
	}

	for _, dev := range m.Network().Devices() {
		if dev == nil || dev.VIPConfig() == nil || dev.VIPConfig().IP() == "" {
			continue
		}

		addr, err := netip.ParseAddr(dev.VIPConfig().IP())
		if err != nil {
			continue
		}

		nc.vip, nc.vipLink, nc.hasVIP = addr, dev.Interface(), true

		if h := dev.VIPConfig().HCloud(); h != nil && h.APIToken() != "" {
			nc.vipHCloud, nc.vipHCloudToken = true, h.APIToken()
		}

		return
	}
}

// maintenanceConfig stands for "no machine config": a node in maintenance
// mode belongs to no Talos cluster.
func maintenanceConfig(serverID int64) *nodeConfig {
	return &nodeConfig{
		clusterID:   fmt.Sprintf("maintenance:%d", serverID),
		maintenance: true,
		labels:      map[string]string{},
		taints:      map[string]string{},
	}
}
