package spec

import (
	"fmt"
	"net/netip"
	"strings"
)

// Defaults of the field notes' target cluster.
const (
	DefaultTalosVersion = "v1.13.9"
	// DefaultKubernetesVersion is the Talos v1.13.9 release's own default
	// (machinery constants.DefaultKubernetesVersion).
	DefaultKubernetesVersion = "1.36.3"
	DefaultLocation          = "nbg1"
	DefaultNetworkCIDR       = "10.0.0.0/16"
	DefaultPods              = "10.42.0.0/16"
	DefaultServices          = "10.43.0.0/16"
	DefaultCPType            = "cpx22"
	DefaultWorkerType        = "cpx32"
	DefaultLBType            = "lb11"
	EndpointVIP              = "vip"
	EndpointLoadBalancer     = "loadbalancer"
	// AccessPublic: the kubeconfig names the control planes' public addresses.
	AccessPublic = "public"
	// AccessTailscale: the kubeconfig keeps the VIP, reached through Tailscale.
	AccessTailscale = "tailscale"
)

// zoneOf maps Hetzner locations to their network zone.
var zoneOf = map[string]string{
	"fsn1": "eu-central", "nbg1": "eu-central", "hel1": "eu-central",
	"ash": "us-east", "hil": "us-west", "sin": "ap-southeast",
}

// Locations lists the Hetzner Cloud locations the spec accepts.
func Locations() []string { return []string{"fsn1", "nbg1", "hel1", "ash", "hil", "sin"} }

// ZoneOf returns the network zone of a location, or "".
func ZoneOf(location string) string { return zoneOf[location] }

// Default returns a spec for a new cluster named name: the target cluster.
func Default(name string) *Spec {
	s := &Spec{Name: name}
	s.Default()
	return s
}

func boolPtr(b bool) *bool { return &b }

// Default fills every omitted field with the target cluster's value.
func (s *Spec) Default() {
	if s.Talos.Version == "" {
		s.Talos.Version = DefaultTalosVersion
	}
	if s.Kubernetes.Version == "" {
		s.Kubernetes.Version = DefaultKubernetesVersion
	}
	s.Kubernetes.Version = strings.TrimPrefix(s.Kubernetes.Version, "v")
	if s.Location == "" {
		s.Location = DefaultLocation
	}
	n := &s.Network
	if n.CIDR == "" {
		n.CIDR = DefaultNetworkCIDR
	}
	if n.Zone == "" {
		n.Zone = ZoneOf(s.Location)
	}
	if n.Pods == "" {
		n.Pods = DefaultPods
	}
	if n.Services == "" {
		n.Services = DefaultServices
	}
	cp := &s.ControlPlane
	if cp.ServerType == "" {
		cp.ServerType = DefaultCPType
	}
	if cp.Count == 0 {
		cp.Count = 3
	}
	if cp.Location == "" {
		cp.Location = s.Location
	}
	if cp.Subnet == "" {
		cp.Subnet = nthSubnet(n.CIDR, 1)
	}
	if cp.VIP == "" && s.Endpoint.Mode != EndpointLoadBalancer {
		cp.VIP = hostAt(cp.Subnet, 100)
	}
	if s.Pools == nil {
		s.Pools = []Pool{{Name: "worker", ServerType: DefaultWorkerType, Count: 2}}
	}
	for i := range s.Pools {
		p := &s.Pools[i]
		if p.ServerType == "" {
			p.ServerType = DefaultWorkerType
		}
		if p.Location == "" {
			p.Location = s.Location
		}
		if p.Subnet == "" {
			p.Subnet = nthSubnet(n.CIDR, i+2)
		}
		if p.LoadBalancer == nil {
			p.LoadBalancer = boolPtr(!p.Storage)
		}
		if p.Schematic == "" {
			p.Schematic = "worker"
		}
	}
	if s.LoadBalancer.Type == "" {
		s.LoadBalancer.Type = DefaultLBType
	}
	if s.LoadBalancer.Location == "" {
		s.LoadBalancer.Location = s.Location
	}
	if s.Endpoint.Mode == "" {
		s.Endpoint.Mode = EndpointVIP
	}
	// firewall.allow stays empty: the pools step admits only the operator's
	// own address, detected at plan time (steps/firewall_sources.go).
	// 0.0.0.0/0 appears only when the spec says so.
	if s.Endpoint.Access == "" && s.Endpoint.Mode == EndpointVIP {
		s.Endpoint.Access = AccessPublic
	}
	if s.PublicNetwork == nil {
		s.PublicNetwork = &PublicNetwork{IPv4: true, IPv6: true}
	}
	if s.Schematics.ControlPlane.Extensions == nil {
		s.Schematics.ControlPlane.Extensions = []string{"siderolabs/tailscale"}
	}
	if s.Schematics.Worker.Extensions == nil {
		s.Schematics.Worker.Extensions = []string{"siderolabs/iscsi-tools", "siderolabs/util-linux-tools"}
	}
	if s.Secrets.HCloudToken.Provider == "" && s.Secrets.HCloudToken.Ref == "" {
		s.Secrets.HCloudToken = SecretRef{Provider: "env", Ref: "HCLOUD_TOKEN"}
	}
	s.defaultAddons()
}

// nthSubnet returns the n-th /24 of an IPv4 network (10.0.0.0/16, 2 ->
// 10.0.2.0/24), or "" when the network does not parse or is too small.
func nthSubnet(network string, n int) string {
	p, err := netip.ParsePrefix(network)
	if err != nil || !p.Addr().Is4() || p.Bits() > 24 {
		return ""
	}
	a := p.Masked().Addr().As4()
	v := uint32(a[0])<<24 | uint32(a[1])<<16 | uint32(a[2])<<8 | uint32(a[3])
	v += uint32(n) << 8
	out := netip.AddrFrom4([4]byte{byte(v >> 24), byte(v >> 16), byte(v >> 8), 0})
	if !p.Contains(out) {
		return ""
	}
	return netip.PrefixFrom(out, 24).String()
}

// hostAt returns the address at offset i inside cidr, or "".
func hostAt(cidr string, i int) string {
	p, err := netip.ParsePrefix(cidr)
	if err != nil || !p.Addr().Is4() {
		return ""
	}
	a := p.Masked().Addr().As4()
	v := uint32(a[0])<<24 | uint32(a[1])<<16 | uint32(a[2])<<8 | uint32(a[3])
	v += uint32(i)
	out := netip.AddrFrom4([4]byte{byte(v >> 24), byte(v >> 16), byte(v >> 8), byte(v)})
	if !p.Contains(out) {
		return ""
	}
	return out.String()
}

// Arch returns the CPU architecture of a Hetzner server type: Ampere
// types (cax*) are arm64, every other family is amd64.
func Arch(serverType string) string {
	if strings.HasPrefix(serverType, "cax") {
		return "arm64"
	}
	return "amd64"
}

// Role of a node.
const (
	RoleControlPlane = "controlplane"
	RoleWorker       = "worker"
)

// Node is one server the spec asks for.
type Node struct {
	Name       string
	Role       string
	Pool       string // "controlplane" for control planes
	Index      int    // 1-based within its pool
	ServerType string
	Location   string
	PrivateIP  string
	Subnet     string
}

// hostOffset is where node addresses start in a subnet: .1 is Hetzner's
// gateway, and low addresses stay free for the operator.
const hostOffset = 10

// Nodes lists every server of the spec, control planes first, with fixed
// private IPs from each pool's subnet.
func (s *Spec) Nodes() []Node {
	var out []Node
	cp := s.ControlPlane
	for i := 1; i <= cp.Count; i++ {
		out = append(out, Node{
			Name: fmt.Sprintf("%s-cp-%d", s.Name, i), Role: RoleControlPlane, Pool: RoleControlPlane, Index: i,
			ServerType: cp.ServerType, Location: cp.Location, Subnet: cp.Subnet, PrivateIP: hostAt(cp.Subnet, hostOffset+i),
		})
	}
	for _, p := range s.Pools {
		for i := 1; i <= p.Count; i++ {
			out = append(out, Node{
				Name: fmt.Sprintf("%s-%s-%d", s.Name, p.Name, i), Role: RoleWorker, Pool: p.Name, Index: i,
				ServerType: p.ServerType, Location: p.Location, Subnet: p.Subnet, PrivateIP: hostAt(p.Subnet, hostOffset+i),
			})
		}
	}
	return out
}

// SchematicFor returns the schematic name a pool uses ("controlPlane" for
// the control plane).
func (s *Spec) SchematicFor(pool string) (string, Schematic) {
	if pool == RoleControlPlane {
		return "controlPlane", s.Schematics.ControlPlane
	}
	for _, p := range s.Pools {
		if p.Name != pool {
			continue
		}
		if p.Schematic == "worker" || p.Schematic == "" {
			return "worker", s.Schematics.Worker
		}
		return p.Schematic, s.Schematics.Extra[p.Schematic]
	}
	return "worker", s.Schematics.Worker
}
