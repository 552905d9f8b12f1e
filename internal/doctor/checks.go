package doctor

import "time"

// Checks returns the registry of checks in a stable order: cluster network
// first, then cloud, Kubernetes, DNS and repository checks.
func Checks() []Check {
	return []Check{
		{ID: "talos-endpoints", Title: "the talosconfig's endpoints are set, answer from here and are not the VIP", Timeout: 20 * time.Second, Run: checkTalosEndpoints},
		{ID: "vip-link", Title: "VIP is on an existing private link", Timeout: 20 * time.Second, Run: checkVIPLink},
		{ID: "vip-claimed", Title: "exactly one control plane holds the VIP", Timeout: 20 * time.Second, Run: checkVIPClaimed},
		{ID: "etcd", Title: "etcd members match the control planes; snapshots are recent", Timeout: 20 * time.Second, Run: checkEtcd},
		{ID: "version-skew", Title: "Talos and Kubernetes versions match the spec and what ohmytalos supports", Timeout: 20 * time.Second, Run: checkVersionSkew},
		{ID: "egress", Title: "every node has a default route (via the network gateway without a public IPv4)", Timeout: 20 * time.Second, Run: checkEgress},
		{ID: "mtu", Title: "MTUs fit Hetzner's private network (1450)", Timeout: 20 * time.Second, Run: checkMTU},
		{ID: "lb-targets", Title: "load balancers have healthy targets", Timeout: 30 * time.Second, Run: checkLBTargets},
		{ID: "lb-owners", Title: "each load balancer's services and targets have one owner", Timeout: 30 * time.Second, Run: checkLBOwners},
		{ID: "lb-pending", Title: "LoadBalancer Services have an address", Timeout: 20 * time.Second, Run: checkLBPending},
		{ID: "api-budget", Title: "the Hetzner API's hourly request budget is not running out", Timeout: 20 * time.Second, Run: checkAPIBudget},
		{ID: "images", Title: "Talos snapshots exist for every pool", Timeout: 30 * time.Second, Run: checkImages},
		{ID: "kubeconfig-reachable", Title: "the kubeconfig's API servers answer from here", Timeout: 30 * time.Second, Run: checkKubeconfigReachable},
		{ID: "provider-id", Title: "every node's providerID is hcloud://", Timeout: 20 * time.Second, Run: checkProviderID},
		{ID: "nodes-ready", Title: "every node is Ready", Timeout: 20 * time.Second, Run: checkNodesReady},
		{ID: "image-pulls", Title: "no container waits on an image pull", Timeout: 20 * time.Second, Run: checkImagePulls},
		{ID: "addons", Title: "Cilium, cloud controller and CSI workloads are ready", Timeout: 30 * time.Second, Run: checkAddons},
		{ID: "cilium-talos", Title: "Cilium is configured for Talos", Timeout: 20 * time.Second, Run: checkCiliumTalos},
		{ID: "metadata-policy", Title: "pods cannot read the metadata service (machine configs)", Timeout: 20 * time.Second, Run: checkMetadataPolicy},
		{ID: "dns-ipv6", Title: "AAAA records point at IPv6 listeners", Timeout: 30 * time.Second, Run: checkDNSIPv6},
		{ID: "external-dns-owner", Title: "one external-dns owns the records", Timeout: 30 * time.Second, Run: checkExternalDNSOwner},
		{ID: "helmfile-v1", Title: "helmfiles parse under helmfile v1", Timeout: 20 * time.Second, Run: checkHelmfileV1},
		{ID: "sops-rules", Title: "SOPS files are encrypted for their rule's recipients", Timeout: 20 * time.Second, Run: checkSopsRules},
	}
}
