package addons

import (
	"strconv"

	"github.com/ohmytalos/ohmytalos/internal/charts"
	"github.com/ohmytalos/ohmytalos/internal/spec"
)

// CiliumValues are the cilium chart's values (keys: cilium/charts
// cilium-1.19.6.tgz values.yaml and values.schema.json) carrying what the
// typed renderer's cilium-config sets: Talos' values from its own e2e
// install (siderolabs/talos hack/test/e2e.sh, the "strict" case, with
// KubePrism's port 7445), the Hetzner MTU and the routing mode.
func CiliumValues(sp *spec.Spec, _ Inputs) []charts.Value {
	port, _ := strconv.Atoi(kubePrismPort)
	out := []charts.Value{
		need("ipam.mode", "kubernetes", "pod ranges come from each Node's podCIDR, which Talos' controller manager allocates from network.pods"),
		need("kubeProxyReplacement", true, "Talos runs without kube-proxy (cluster.proxy.disabled): Cilium serves Services"),
		need("k8sServiceHost", kubePrismHost, "KubePrism: the API through the node's local load balancer, up before any CNI (not the VIP, field notes pitfall 1)"),
		need("k8sServicePort", port, "KubePrism's port on Talos"),
		need("securityContext.capabilities.ciliumAgent", strsOf(talosAgentCaps), "the chart's capabilities minus SYS_MODULE and SYSLOG, which Talos does not grant (unable to apply caps, field notes pitfall 2)"),
		need("securityContext.capabilities.cleanCiliumState", strsOf(talosCleanCaps), "clean-cilium-state's capabilities minus SYS_MODULE, which Talos does not grant"),
		need("cgroup.autoMount.enabled", false, "Talos mounts cgroup2 itself; Cilium must not mount its own"),
		need("cgroup.hostRoot", cgroupHostRoot, "where Talos mounts cgroup2"),
		set("MTU", HetznerMTU, "Hetzner private networks carry 1450-byte packets (field notes pitfall 8)"),
		set("operator.replicas", controlPlaneReplicas(sp), "two operators on an HA control plane, one on a single control plane (the chart's anti-affinity would leave a second one pending)"),
		set("operator.nodeSelector", map[string]any{"node-role.kubernetes.io/control-plane": ""}, "the operator runs on the control planes: they exist from the start, workers may join later"),
	}
	if nativeRouting(sp) {
		return append(out,
			need("routingMode", "native", "network.nativeRouting: pod traffic goes through the Hetzner network routes the cloud controller writes"),
			need("ipv4NativeRoutingCIDR", sp.Network.CIDR, "every address in the Hetzner network is reachable without SNAT"),
		)
	}
	return append(out,
		need("routingMode", "tunnel", "pods reach each other through a VXLAN tunnel (network.nativeRouting is off)"),
		set("tunnelProtocol", "vxlan", "VXLAN over the private network; Cilium subtracts its overhead from the 1450 MTU"),
	)
}

// strsOf copies a string list as YAML/JSON values ([]any).
func strsOf(ss []string) []any {
	out := make([]any, len(ss))
	for i, s := range ss {
		out[i] = s
	}
	return out
}
