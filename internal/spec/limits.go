package spec

import "fmt"

// Hetzner's hard limits that bound a cluster of one network, whatever the
// account's limits:
//   - a network holds at most 100 servers and 100 routes
//     (hetznercloud/hcloud-cloud-controller-manager#342);
//   - a network has at most 50 subnets (docs.hetzner.com/cloud/networks/faq,
//     "you can create up to 50 subnets"), one per pool plus the control
//     plane's;
//   - a spread placement group holds 10 servers and a project at most 50
//     groups (docs.hetzner.com/cloud/placement-groups/overview, Limits).
const (
	MaxNetworkServers  = 100
	MaxNetworkSubnets  = 50
	MaxPlacementGroups = 50
	// PlacementGroupSize is the servers one spread placement group holds.
	PlacementGroupSize = 10
)

// Limits are the Hetzner account's project limits, as the Cloud Console
// shows them under Limits. Hetzner's public API has no endpoint that reads
// them (hetznercloud/hcloud-go#302), so the operator states them; zero
// means unknown. Pre-flight checks the plan against them, counting what the
// project already holds.
type Limits struct {
	Servers         int `yaml:"servers,omitempty"`
	PrimaryIPs      int `yaml:"primaryIPs,omitempty"`
	Volumes         int `yaml:"volumes,omitempty"`
	PlacementGroups int `yaml:"placementGroups,omitempty"`
}

// PlacementGroupCount is how many spread placement groups the spec needs:
// one per started ten servers of each pool (the control plane included).
func (s *Spec) PlacementGroupCount() int {
	n := (s.ControlPlane.Count + PlacementGroupSize - 1) / PlacementGroupSize
	for _, p := range s.Pools {
		n += (p.Count + PlacementGroupSize - 1) / PlacementGroupSize
	}
	return n
}

// ServerCount is how many servers the spec describes.
func (s *Spec) ServerCount() int {
	n := s.ControlPlane.Count
	for _, p := range s.Pools {
		n += p.Count
	}
	return n
}

// validateTotals bounds the cluster as a whole by Hetzner's hard limits
// and the stated account limits. It runs before anything that walks every
// node, so a huge spec is refused at once.
func (s *Spec) validateTotals(add func(string, string, string)) {
	if len(s.Pools)+1 > MaxNetworkSubnets {
		add("pools", fmt.Sprintf("%d pools need %d subnets; a Hetzner network has at most %d", len(s.Pools), len(s.Pools)+1, MaxNetworkSubnets),
			fmt.Sprintf("use at most %d pools (merge pools that share a server type)", MaxNetworkSubnets-1))
	}
	servers := s.ServerCount()
	if servers > MaxNetworkServers {
		add("pools", fmt.Sprintf("%d servers in all; a Hetzner network holds at most %d", servers, MaxNetworkServers),
			fmt.Sprintf("lower the pools' counts to %d servers in all (control plane included), or split the cluster", MaxNetworkServers))
	}
	if pg := s.PlacementGroupCount(); pg > MaxPlacementGroups {
		add("pools", fmt.Sprintf("%d spread placement groups needed (one per 10 servers of each pool); a project holds at most %d", pg, MaxPlacementGroups),
			"use fewer, larger pools")
	}
	if s.Limits == nil {
		return
	}
	l := s.Limits
	for _, c := range []struct {
		field string
		n     int
	}{{"limits.servers", l.Servers}, {"limits.primaryIPs", l.PrimaryIPs}, {"limits.volumes", l.Volumes}, {"limits.placementGroups", l.PlacementGroups}} {
		if c.n < 0 {
			add(c.field, fmt.Sprintf("%d is negative", c.n), "write the limit the Cloud Console shows under Limits, or leave it out")
		}
	}
	if l.Servers > 0 && servers > l.Servers {
		add("limits.servers", fmt.Sprintf("the cluster has %d servers; the project may hold %d", servers, l.Servers),
			"lower the pools' counts, or ask Hetzner to raise the limit (Cloud Console, Limits) and update limits.servers")
	}
}
