package spec

import (
	"fmt"

	"github.com/ohmytalos/ohmytalos/internal/netplan"
	"github.com/ohmytalos/ohmytalos/internal/pricing"
)

// Layout adapts the spec to the network validator's input.
func (s *Spec) Layout() netplan.Layout {
	l := netplan.Layout{
		Network: s.Network.CIDR, NetworkField: "network.cidr",
		Pods: s.Network.Pods, Services: s.Network.Services,
		VIP: s.ControlPlane.VIP, NativeRouting: s.Network.NativeRouting,
	}
	l.Subnets = append(l.Subnets, netplan.Subnet{Field: "controlPlane.subnet", Name: "control plane", CIDR: s.ControlPlane.Subnet, Count: s.ControlPlane.Count})
	for i, p := range s.Pools {
		l.Subnets = append(l.Subnets, netplan.Subnet{Field: fmt.Sprintf("pools[%d].subnet", i), Name: p.Name, CIDR: p.Subnet, Count: p.Count})
	}
	return l
}

// Findings returns the network layout findings (errors and warnings).
func (s *Spec) Findings() []netplan.Finding { return netplan.Validate(s.Layout()) }

// SnapshotSizeGB is the billed size assumed for one Talos snapshot: the
// hcloud raw image is compressed by Hetzner to well under a gigabyte.
const SnapshotSizeGB = 1.0

// Usage adapts the spec to the cost model's input.
func (s *Spec) Usage() pricing.Usage {
	pub := s.PublicNetwork
	if pub == nil {
		pub = &PublicNetwork{IPv4: true, IPv6: true}
	}
	u := pricing.Usage{Backups: s.Backups}
	u.Pools = append(u.Pools, pricing.PoolUsage{Name: "control plane", ServerType: s.ControlPlane.ServerType, Location: s.ControlPlane.Location,
		Count: s.ControlPlane.Count, PublicIPv4: pub.IPv4, PublicIPv6: pub.IPv6})
	for _, p := range s.Pools {
		u.Pools = append(u.Pools, pricing.PoolUsage{Name: p.Name, ServerType: p.ServerType, Location: p.Location, Count: p.Count,
			VolumeGB: p.VolumeSize, PublicIPv4: pub.IPv4, PublicIPv6: pub.IPv6})
	}
	u.LoadBalancers = append(u.LoadBalancers, pricing.LBUsage{Name: "ingress load balancer", Type: s.LoadBalancer.Type, Location: s.LoadBalancer.Location})
	if s.Endpoint.Mode == EndpointLoadBalancer {
		u.LoadBalancers = append(u.LoadBalancers, pricing.LBUsage{Name: "api load balancer", Type: s.LoadBalancer.Type, Location: s.LoadBalancer.Location})
	}
	for _, im := range s.Images() {
		u.Snapshots = append(u.Snapshots, pricing.SnapshotUsage{Name: im.String(), SizeGB: SnapshotSizeGB})
	}
	return u
}

// layoutProblems turns network layout errors into spec problems.
func (s *Spec) layoutProblems() Problems {
	var ps Problems
	for _, f := range s.Findings() {
		if f.Severity == netplan.SeverityError {
			ps = append(ps, Problem{Field: f.Field, Reason: f.Message, Fix: f.Fix})
		}
	}
	return ps
}

// Image is one Talos snapshot the nodes boot from: a schematic (by name)
// built for an architecture.
type Image struct {
	Schematic, Arch string
}

func (i Image) String() string { return i.Schematic + "-" + i.Arch }

// Images lists the images the nodes need, in node order, each once.
func (s *Spec) Images() []Image {
	var out []Image
	seen := map[Image]bool{}
	for _, n := range s.Nodes() {
		name, _ := s.SchematicFor(n.Pool)
		im := Image{Schematic: name, Arch: Arch(n.ServerType)}
		if !seen[im] {
			seen[im] = true
			out = append(out, im)
		}
	}
	return out
}
