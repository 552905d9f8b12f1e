package talos

import (
	"fmt"
	"slices"
	"strings"

	coreconfig "github.com/siderolabs/talos/pkg/machinery/config"
	"github.com/siderolabs/talos/pkg/machinery/config/types/network"
	"github.com/siderolabs/talos/pkg/machinery/config/types/v1alpha1"
)

// dependency is one setting ohmytalos's cluster relies on, with why.
type dependency struct {
	// path is the config path the warning names.
	path string
	// why says what breaks when a patch changes it.
	why string
	// read reads the setting's value from a config ("" when unset).
	read func(coreconfig.Provider) string
}

// dependencies are the settings a patch must not change for the cluster
// ohmytalos builds to work.
var dependencies = []dependency{
	{"cluster.network.cni.name", "Cilium is the CNI ohmytalos installs; Talos must install none", func(c coreconfig.Provider) string {
		if cl := cluster(c); cl != nil && cl.ClusterNetwork != nil && cl.ClusterNetwork.CNI != nil {
			return cl.ClusterNetwork.CNI.CNIName
		}
		return ""
	}},
	{"cluster.proxy.disabled", "Cilium replaces kube-proxy; a kube-proxy beside it fights over the service rules", func(c coreconfig.Provider) string {
		if cl := cluster(c); cl != nil && cl.ProxyConfig != nil && cl.ProxyConfig.Disabled != nil {
			return fmt.Sprint(*cl.ProxyConfig.Disabled)
		}
		return ""
	}},
	{"cluster.externalCloudProvider.enabled", "the Hetzner cloud controller initialises the nodes (provider IDs, load balancers, routes)", func(c coreconfig.Provider) string {
		if cl := cluster(c); cl != nil && cl.ExternalCloudProviderConfig != nil && cl.ExternalCloudProviderConfig.ExternalEnabled != nil {
			return fmt.Sprint(*cl.ExternalCloudProviderConfig.ExternalEnabled)
		}
		return ""
	}},
	{"cluster.network.podSubnets", "Cilium, the cloud controller's routes and the firewall use the spec's network.pods", func(c coreconfig.Provider) string {
		if cl := cluster(c); cl != nil && cl.ClusterNetwork != nil {
			return strings.Join(cl.ClusterNetwork.PodSubnet, ",")
		}
		return ""
	}},
	{"cluster.network.serviceSubnets", "the add-ons and the doctor use the spec's network.services", func(c coreconfig.Provider) string {
		if cl := cluster(c); cl != nil && cl.ClusterNetwork != nil {
			return strings.Join(cl.ClusterNetwork.ServiceSubnet, ",")
		}
		return ""
	}},
	{"machine.install.disk", "upgrades install Talos on the disk the snapshot was written to", func(c coreconfig.Provider) string {
		if m := machineCfg(c); m != nil && m.MachineInstall != nil {
			return m.MachineInstall.InstallDisk
		}
		return ""
	}},
	{"machine.features.kubePrism", "Cilium and the add-ons reach the API through KubePrism on port 7445", func(c coreconfig.Provider) string {
		if m := machineCfg(c); m != nil && m.MachineFeatures != nil && m.MachineFeatures.KubePrismSupport != nil {
			k := m.MachineFeatures.KubePrismSupport
			return fmt.Sprintf("enabled=%v port=%d", k.ServerEnabled != nil && *k.ServerEnabled, k.ServerPort)
		}
		return ""
	}},
	{"HCloudVIPConfig", "the API VIP moves between control planes through this document", func(c coreconfig.Provider) string {
		var out []string
		for _, d := range c.Documents() {
			if v, ok := d.(*network.HCloudVIPConfigV1Alpha1); ok {
				out = append(out, fmt.Sprintf("%s on link %s", v.MetaName, v.LinkName))
			}
		}
		return strings.Join(out, "; ")
	}},
}

func cluster(c coreconfig.Provider) *v1alpha1.ClusterConfig {
	if v := c.RawV1Alpha1(); v != nil {
		return v.ClusterConfig
	}
	return nil
}

func machineCfg(c coreconfig.Provider) *v1alpha1.MachineConfig {
	if v := c.RawV1Alpha1(); v != nil {
		return v.MachineConfig
	}
	return nil
}

// certSANs are the machine and API server SANs of a config.
func configSANs(c coreconfig.Provider) (machineSANs, apiSANs []string) {
	if m := machineCfg(c); m != nil {
		machineSANs = m.MachineCertSANs
	}
	if cl := cluster(c); cl != nil && cl.APIServerConfig != nil {
		apiSANs = cl.APIServerConfig.CertSANs
	}
	return machineSANs, apiSANs
}

// dependencyWarnings compares the config before and after one patch on
// the settings ohmytalos depends on, and names the patch and each
// setting it changed.
func dependencyWarnings(before, after coreconfig.Provider, patch string) []string {
	var out []string
	for _, d := range dependencies {
		was, is := d.read(before), d.read(after)
		if was != is {
			out = append(out, fmt.Sprintf("patch %s changes %s (%s -> %s), which ohmytalos relies on: %s; remove that part of the patch unless you replace what it breaks",
				patch, d.path, orUnset(was), orUnset(is), d.why))
		}
	}
	bm, ba := configSANs(before)
	am, aa := configSANs(after)
	for _, f := range []struct {
		path          string
		before, after []string
	}{{"machine.certSANs", bm, am}, {"cluster.apiServer.certSANs", ba, aa}} {
		var lost []string
		for _, s := range f.before {
			if !slices.Contains(f.after, s) {
				lost = append(lost, s)
			}
		}
		if len(lost) > 0 {
			out = append(out, fmt.Sprintf("patch %s removes %s from %s, which ohmytalos sets so the API certificates are valid on the endpoint, the VIP and the public addresses; add them back to the patch", patch, strings.Join(lost, ", "), f.path))
		}
	}
	return out
}

func orUnset(s string) string {
	if s == "" {
		return "unset"
	}
	return s
}
