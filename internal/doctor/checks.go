package doctor

import "time"

// Checks returns the registry of checks in a stable order: cluster network
// first, then cloud, Kubernetes, DNS and repository checks.
func Checks() []Check {
	return []Check{
		{ID: "vip-link", Title: "VIP is on an existing private link", Timeout: 20 * time.Second, Run: checkVIPLink},
		{ID: "vip-claimed", Title: "exactly one control plane holds the VIP", Timeout: 20 * time.Second, Run: checkVIPClaimed},
		{ID: "etcd", Title: "etcd members match the control planes; snapshots are recent", Timeout: 20 * time.Second, Run: checkEtcd},
		{ID: "mtu", Title: "MTUs fit Hetzner's private network (1450)", Timeout: 20 * time.Second, Run: checkMTU},
		{ID: "lb-targets", Title: "load balancers have healthy targets", Timeout: 30 * time.Second, Run: checkLBTargets},
		{ID: "images", Title: "Talos snapshots exist for every pool", Timeout: 30 * time.Second, Run: checkImages},
		{ID: "kubeconfig-reachable", Title: "the kubeconfig's API servers answer from here", Timeout: 30 * time.Second, Run: checkKubeconfigReachable},
		{ID: "provider-id", Title: "every node's providerID is hcloud://", Timeout: 20 * time.Second, Run: checkProviderID},
		{ID: "nodes-ready", Title: "every node is Ready", Timeout: 20 * time.Second, Run: checkNodesReady},
		{ID: "addons", Title: "Cilium, cloud controller and CSI workloads are ready", Timeout: 30 * time.Second, Run: checkAddons},
		{ID: "cilium-talos", Title: "Cilium is configured for Talos", Timeout: 20 * time.Second, Run: checkCiliumTalos},
		{ID: "metadata-policy", Title: "pods cannot read the metadata service (machine configs)", Timeout: 20 * time.Second, Run: checkMetadataPolicy},
		{ID: "dns-ipv6", Title: "AAAA records point at IPv6 listeners", Timeout: 30 * time.Second, Run: checkDNSIPv6},
		{ID: "external-dns-owner", Title: "one external-dns owns the records", Timeout: 30 * time.Second, Run: checkExternalDNSOwner},
		{ID: "helmfile-v1", Title: "helmfiles parse under helmfile v1", Timeout: 20 * time.Second, Run: checkHelmfileV1},
		{ID: "sops-rules", Title: "SOPS files are encrypted for their rule's recipients", Timeout: 20 * time.Second, Run: checkSopsRules},
	}
}
