package talosfake

import "errors"

// RegistryFault is how the registries answer one server's kubelet: a
// GeoIP 403 from the Forbidden hosts (registry.k8s.io to misplaced
// Hetzner addresses, hcloud-talos #46), or no IPv4 egress at all
// (ghcr.io has no IPv6, hcloud-k8s #258). The zero value is no fault.
type RegistryFault struct {
	Forbidden []string
	NoIPv4    bool
}

// errRegistryFaultNotModelled is SetRegistryFault's answer on this branch.
var errRegistryFaultNotModelled = errors.New("registry faults: not modelled on this branch")

// SetRegistryFault makes the registries answer the server's kubelet as f
// says; the zero value clears it. Not modelled on this branch: it always
// returns an error (the simulated kubelets take kubereal.KubeletConfig.
// PullError, which nothing wires from here yet).
func (c *Cluster) SetRegistryFault(serverID int64, f RegistryFault) error {
	_, _ = serverID, f

	return errRegistryFaultNotModelled
}
