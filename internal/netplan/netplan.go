// Package netplan checks the address layout of a cluster on a Hetzner Cloud
// Network before anything is created: the private network, one subnet per
// node pool, the Kubernetes pod and service ranges and the API VIP.
//
// It reports every problem at once, each naming the spec field, the reason and
// a fix, so the wizard can show them next to the fields they belong to.
//
// Hetzner rules used here (Hetzner Cloud API reference, POST /networks and
// POST /networks/{id}/actions/add_subnet; Networks FAQ at
// docs.hetzner.com/cloud/networks/faq):
//   - a Network's ip_range "must be one of the private IPv4 ranges of RFC1918",
//     "minimum network size is /24"; Networks only support IPv4;
//   - a subnet "must be a subnet of the ip_range of the parent network object
//     and must not overlap with any other subnets";
//   - in a cloud subnet the first address is the subnet gateway (for example
//     10.0.0.1 in 10.0.0.0/24, docs.hetzner.com/networking/networks/
//     technical-concepts/architecture), so servers start at .2.
package netplan

// Severity says whether a finding blocks the plan ("error") or only deserves
// attention ("warning").
type Severity string

// Severities of a Finding.
const (
	SeverityError   Severity = "error"
	SeverityWarning Severity = "warning"
)

// Finding is one problem in a Layout: the spec field it belongs to (a path
// like "pools[1].subnet", "network.pods" or "controlPlane.vip"), how bad it
// is, what is wrong and why, and what to change.
type Finding struct {
	Field    string
	Severity Severity
	Message  string
	Fix      string
}

// Subnet is one Hetzner subnet of the layout.
type Subnet struct {
	// Field is the spec path of the subnet's CIDR, e.g. "pools[1].subnet".
	Field string
	// Name names the pool for messages, e.g. "worker".
	Name string
	// CIDR is the subnet range, e.g. "10.0.2.0/24".
	CIDR string
	// Count is how many servers need an address in the subnet.
	Count int
}

// Layout is the address plan of one cluster, as the spec describes it.
type Layout struct {
	// Network is the Hetzner Network range, e.g. "10.0.0.0/16".
	Network string
	// NetworkField is the spec path of Network; "network.cidr" when empty.
	NetworkField string
	// Pods is the Kubernetes pod range (spec field "network.pods").
	Pods string
	// Services is the Kubernetes service range (spec field "network.services").
	Services string
	// Subnets lists one subnet per pool; Subnets[0] is the control plane's.
	Subnets []Subnet
	// VIP is the optional API VIP in the control-plane subnet
	// (spec field "controlPlane.vip").
	VIP string
	// NativeRouting is set when pods are routed natively through Hetzner
	// Network routes (Cilium routing mode "native" with the hcloud CCM route
	// controller) instead of an overlay.
	NativeRouting bool
}

// Spec paths used for the fields the Layout does not name itself.
const (
	fieldNetwork  = "network.cidr"
	fieldPods     = "network.pods"
	fieldServices = "network.services"
	fieldVIP      = "controlPlane.vip"
)

// Well-known ranges a cluster's ranges must not collide with.
const (
	// tailscaleRange is the CGNAT range Tailscale assigns tailnet addresses
	// from (tailscale.com/kb/1015/100.x-addresses); the control planes join the
	// tailnet, so a pod or service range inside it makes those hosts unreachable.
	tailscaleRange = "100.64.0.0/10"
	// dockerRange is Docker's default bridge network; CI runners and operator
	// laptops use it, so routes to it through the tailnet are ambiguous.
	dockerRange = "172.17.0.0/16"
)

// Validate checks l and returns every finding, in a fixed order: the network,
// then each subnet, then the pod and service ranges, native routing, the VIP
// and finally the address capacity of each subnet. An empty result means the
// layout is sound.
func Validate(l Layout) []Finding {
	v := newValidator(l)
	v.checkNetwork()
	v.checkSubnets()
	v.checkClusterRanges()
	v.checkNativeRouting()
	v.checkVIP()
	v.checkCapacity()
	return v.findings
}
