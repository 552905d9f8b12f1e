// Package doctor holds the diagnostic checks that find the failures no
// component of a Talos-on-Hetzner cluster reports by itself: a VIP on a link
// that does not exist, a load balancer without targets, an AAAA record with
// nothing listening on IPv6, SOPS files encrypted for the wrong recipients, and
// the other pitfalls listed in the project's field notes.
//
// Each check reads its facts through small source interfaces (TalosSource,
// CloudSource, KubeSource) or from the operator's repository, so the checks
// themselves do no protocol work and are tested with in-memory sources.
package doctor

import (
	"context"
	"net"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Status is the outcome of one check.
type Status string

// The statuses a check can end in, plus the two used by live displays.
const (
	// StatusPass means the check found nothing wrong.
	StatusPass Status = "pass"
	// StatusWarn means something is suspicious but not broken yet.
	StatusWarn Status = "warn"
	// StatusFail means the check found a real problem.
	StatusFail Status = "fail"
	// StatusSkip means the check could not apply (missing input, e.g. no kubeconfig).
	StatusSkip Status = "skip"
	// StatusError means the check itself could not run (timeout, unreachable source).
	StatusError Status = "error"
	// StatusRunning is for live displays: the check has started.
	StatusRunning Status = "running"
	// StatusPending is for live displays: the check has not started yet.
	StatusPending Status = "pending"
)

// Result is what one check found.
type Result struct {
	// ID is the check's stable identifier, e.g. "vip-link".
	ID string `json:"id"`
	// Title is a short human title.
	Title string `json:"title"`
	// Status is the outcome.
	Status Status `json:"status"`
	// Evidence lists the facts the verdict rests on, one per line.
	Evidence []string `json:"evidence"`
	// Explanation says what is wrong and why it matters (empty on pass).
	Explanation string `json:"explanation"`
	// Fix says what to do about it (empty on pass).
	Fix string `json:"fix"`
	// Duration is how long the check took.
	Duration time.Duration `json:"-"`
}

// Check is one registered diagnostic.
type Check struct {
	// ID is the stable identifier used on the command line and in JSON output.
	ID string
	// Title is a short human title.
	Title string
	// Timeout bounds the check's run; Run applies DefaultTimeout when zero.
	Timeout time.Duration
	// Run performs the check. It must honour ctx and never panic on missing input.
	Run func(ctx context.Context, env *Env) Result
}

// NodeRef names one cluster node and its addresses.
type NodeRef struct {
	// Name is the node (and server) name.
	Name string
	// PublicIP is the node's public IPv4, empty when it has none.
	PublicIP string
	// PrivateIP is the node's address on the Hetzner private network.
	PrivateIP string
}

// ImageKey identifies one Talos snapshot the cluster's pools need.
type ImageKey struct {
	// Arch is "amd64" or "arm64".
	Arch string
	// TalosVersion is e.g. "v1.13.9".
	TalosVersion string
	// SchematicID is the Image Factory schematic ID (64 hex digits).
	SchematicID string
}

// Env is everything the checks read. Nil sources and empty fields make the
// checks that need them skip with the reason, never fail.
type Env struct {
	// ClusterName is the cluster's name (label ohmytalos.io/cluster).
	ClusterName string
	// VIP is the API endpoint's shared IP, e.g. "10.0.1.100".
	VIP string
	// VIPLink is the link the VIP is configured on, e.g. "eth1".
	VIPLink string
	// NetworkCIDR is the private network's range (network.cidr), e.g.
	// "10.0.0.0/16"; its first address is Hetzner's network gateway.
	NetworkCIDR string
	// PrivateCIDR is the control-plane subnet, e.g. "10.0.1.0/24".
	PrivateCIDR string
	// TalosVersion and KubernetesVersion are what the spec says the nodes
	// run (talos.version, kubernetes.version); empty when there is no spec.
	TalosVersion, KubernetesVersion string
	// PodMTU is the MTU configured for pod interfaces (0 = not configured).
	PodMTU int
	// ControlPlanes lists the control-plane nodes.
	ControlPlanes []NodeRef
	// Workers lists the worker nodes of every pool.
	Workers []NodeRef
	// Talos reads node state through the Talos API; nil skips those checks.
	Talos TalosSource
	// Cloud reads Hetzner Cloud resources; nil skips those checks.
	Cloud CloudSource
	// Kube reads the Kubernetes API; nil skips those checks.
	Kube KubeSource
	// Kubeconfig is the operator's kubeconfig (YAML) whose servers the
	// kubeconfig-reachable check dials; empty skips it.
	Kubeconfig []byte
	// Talosconfig is the operator's talosconfig (YAML) whose endpoints the
	// talos-endpoints check dials; empty skips it.
	Talosconfig []byte
	// AddonWorkloads are the workloads the installed add-ons must run;
	// empty means Cilium's, the Hetzner cloud controller's and CSI driver's.
	AddonWorkloads []WorkloadRef
	// Domains are the public names to check in DNS.
	Domains []string
	// Resolver is the DNS server as host:port; empty means the system resolver.
	Resolver string
	// ExternalDNSOwner is the txtOwnerId the cluster's external-dns uses.
	ExternalDNSOwner string
	// RepoDir is the operator's GitOps repository; empty skips file checks.
	RepoDir string
	// ExpectedImages lists the snapshots the pools need.
	ExpectedImages []ImageKey
	// Backup is the scheduled etcd backup (the backup add-on's CronJob);
	// nil means none is configured.
	Backup *ScheduledBackup
	// LastSnapshot is when `ohmytalos etcd snapshot` last ran (zero = never).
	LastSnapshot time.Time
	// Now is the clock for age computations; nil means time.Now.
	Now func() time.Time
	// Skip names checks that cannot run with the sources at hand (e.g. no
	// spec to compare against), with the reason: they skip without running.
	Skip map[string]string
	// IngressIPv6 says whether ohmytalos set the ingress up to serve
	// IPv6 (addons.IngressIPv6: the plan lists AAAA records exactly then);
	// nil when unknown. dns-ipv6 names an AAAA record published anyway.
	IngressIPv6 *bool
	// HandedOver maps a load balancer's name to the Service (NAMESPACE/NAME)
	// ohmytalos handed its services and targets to (the ingress add-on);
	// a load balancer ohmytalos labels, not listed here, has its services
	// and targets reconciled by ohmytalos.
	HandedOver map[string]string
	// OwnerReadGap is how long lb-owners waits between its two reads of
	// the load balancers; 0 means DefaultOwnerReadGap.
	OwnerReadGap time.Duration
	// Dialer opens the TCP connections of listener probes; nil means net.Dialer.
	Dialer func(ctx context.Context, network, addr string) (net.Conn, error)
}

func (e *Env) now() time.Time {
	if e.Now != nil {
		return e.Now()
	}
	return time.Now()
}

func (e *Env) dial(ctx context.Context, network, addr string) (net.Conn, error) {
	if e.Dialer != nil {
		return e.Dialer(ctx, network, addr)
	}
	var d net.Dialer
	return d.DialContext(ctx, network, addr)
}

// Link is one network link of a Talos node (network.LinkStatus).
type Link struct {
	// Name is the kernel link name, e.g. "eth1".
	Name string
	// MTU is the link's MTU.
	MTU int
	// Up is true when the link is operationally up.
	Up bool
}

// Address is one address assigned on a Talos node (network.AddressStatus).
type Address struct {
	// Link is the link name the address is on.
	Link string
	// CIDR is the address with prefix, e.g. "10.0.1.100/32".
	CIDR string
}

// EtcdMember is one etcd member as the cluster reports it.
type EtcdMember struct {
	// ID is the member ID.
	ID uint64
	// Name is the member name (the node's hostname).
	Name string
	// PeerURLs are the member's peer URLs.
	PeerURLs []string
	// IsLearner is true for a learner that has not been promoted.
	IsLearner bool
}

// TalosSource reads node state through the Talos API. The checks address a
// node by its private IP when the NodeRef has one, else by its public IP,
// else by its name (the Talos API is reached over the private network or
// through a control plane).
type TalosSource interface {
	// Links lists the node's network links.
	Links(ctx context.Context, node string) ([]Link, error)
	// Addresses lists the node's assigned addresses.
	Addresses(ctx context.Context, node string) ([]Address, error)
	// VIPConfig returns the link and IP of the VIP in the node's machine
	// config; both are empty when the node has no VIP configured.
	VIPConfig(ctx context.Context, node string) (link string, vip string, err error)
	// EtcdMembers lists etcd members as seen from the node.
	EtcdMembers(ctx context.Context, node string) ([]EtcdMember, error)
}

// LoadBalancer is a Hetzner load balancer with its resolved targets.
type LoadBalancer struct {
	// Name is the load balancer's name.
	Name string
	// Labels are its labels.
	Labels map[string]string
	// Targets are its configured targets.
	Targets []LBTarget
	// Services are its services (listeners), in the API's order.
	Services []LBListener
}

// LBListener is one service of a load balancer, reduced to what tells
// one owner's configuration from another's.
type LBListener struct {
	// Protocol is "tcp", "http" or "https".
	Protocol string
	// ListenPort and DestinationPort are the service's ports.
	ListenPort, DestinationPort int
	// HealthPort is the health check's port.
	HealthPort int
	// Proxyprotocol is the service's PROXY protocol switch.
	Proxyprotocol bool
}

// LBTarget is one configured load balancer target.
type LBTarget struct {
	// Type is "server", "label_selector" or "ip".
	Type string
	// Selector is the label selector of a label_selector target.
	Selector string
	// ServerName names the server of a server target.
	ServerName string
	// Resolved lists the servers the target points at, with their health.
	Resolved []LBResolved
}

// LBResolved is one server a load balancer target resolved to.
type LBResolved struct {
	// ServerName is the server's name.
	ServerName string
	// Health is "healthy", "unhealthy" or "unknown" (worst across services).
	Health string
}

// Server is a Hetzner server of the cluster.
type Server struct {
	// Name is the server's name.
	Name string
	// Labels are its labels.
	Labels map[string]string
}

// Snapshot is a Hetzner snapshot image.
type Snapshot struct {
	// ID is the image ID.
	ID int64
	// Description is the image description.
	Description string
	// Architecture is Hetzner's "x86" or "arm" (amd64/arm64 accepted too).
	Architecture string
	// Labels are its labels.
	Labels map[string]string
}

// CloudSource reads Hetzner Cloud resources of the cluster.
type CloudSource interface {
	// LoadBalancers lists the cluster's load balancers and those the CCM created.
	LoadBalancers(ctx context.Context) ([]LoadBalancer, error)
	// Servers lists the cluster's servers.
	Servers(ctx context.Context) ([]Server, error)
	// Snapshots lists the project's snapshot images.
	Snapshots(ctx context.Context) ([]Snapshot, error)
}

// KubeNode is a Kubernetes node.
type KubeNode struct {
	// Name is the node name.
	Name string
	// ProviderID is spec.providerID, e.g. "hcloud://123".
	ProviderID string
	// Labels are the node's labels.
	Labels map[string]string
	// Ready is the node's Ready condition.
	Ready bool
	// NotReadyReason says why a node is not Ready (no CNI, uninitialized, ...).
	NotReadyReason string
	// Taints are the node's taint keys.
	Taints []string
	// KubeletVersion is status.nodeInfo.kubeletVersion, e.g. "v1.36.3".
	KubeletVersion string
}

// Workload is a Deployment's or DaemonSet's readiness.
type Workload struct {
	// Kind is "Deployment" or "DaemonSet".
	Kind string
	// Namespace and Name locate it.
	Namespace, Name string
	// Ready pods of Want.
	Ready, Want int
}

// WorkloadRef names a workload an add-on runs.
type WorkloadRef struct {
	// Addon is the add-on's name, e.g. "cilium".
	Addon string
	// Kind is "Deployment" or "DaemonSet".
	Kind string
	// Namespace and Name locate it.
	Namespace, Name string
}

// CiliumConfig is the part of Cilium's configuration that matters on Talos.
type CiliumConfig struct {
	// Source says where the values were read from (a file or the cluster).
	Source string
	// K8sServiceHost is the API server host the agent uses.
	K8sServiceHost string
	// K8sServicePort is the API server port the agent uses (0 = unset).
	K8sServicePort int
	// CgroupAutoMount is true when Cilium mounts its own cgroup2 (bad on Talos).
	CgroupAutoMount bool
	// CgroupHostRoot is cgroup.hostRoot (Talos: /sys/fs/cgroup).
	CgroupHostRoot string
	// AgentCaps are the cilium-agent container's added capabilities.
	AgentCaps []string
	// CleanCaps are the clean-cilium-state init container's added capabilities.
	CleanCaps []string
	// MTU is Cilium's configured MTU (0 = auto).
	MTU int
	// PolicyEnforcement is the agent's policy enforcement mode (cilium-config
	// enable-policy, Helm value policyEnforcementMode): default, always or
	// never; "" when not set (the agent's default, default).
	PolicyEnforcement string
	// PolicyAuditMode is cilium-config policy-audit-mode (Helm value
	// policyAuditMode): policy verdicts are logged, not enforced.
	PolicyAuditMode bool
}

// KubeSource reads the Kubernetes API.
type KubeSource interface {
	// Nodes lists the cluster's nodes.
	Nodes(ctx context.Context) ([]KubeNode, error)
	// CiliumConfig reads Cilium's deployed configuration; nil, nil when Cilium
	// is not installed.
	CiliumConfig(ctx context.Context) (*CiliumConfig, error)
	// Workload reads a Deployment's or DaemonSet's readiness; nil, nil when
	// it does not exist.
	Workload(ctx context.Context, kind, namespace, name string) (*Workload, error)
	// CiliumClusterwidePolicies lists the CiliumClusterwideNetworkPolicies;
	// nil, nil when the kind is not served (no cilium-operator registered it).
	CiliumClusterwidePolicies(ctx context.Context) ([]CiliumPolicy, error)
	// NamespacedPolicies lists the CiliumNetworkPolicies and Kubernetes
	// NetworkPolicies of every namespace (Cilium enforces both), each with
	// its Namespace; a kind not served holds none.
	NamespacedPolicies(ctx context.Context) ([]CiliumPolicy, error)
}

// CiliumPolicy is a Cilium policy (or a Kubernetes NetworkPolicy, which
// Cilium enforces alike), reduced to what the metadata-policy check reads.
type CiliumPolicy struct {
	// Name is the policy's name (a NetworkPolicy's starts "NetworkPolicy ").
	Name string
	// Namespace is a namespaced policy's namespace: its rules select pods
	// of that namespace only ("" for a clusterwide policy).
	Namespace string
	// Rules are its spec and specs rules.
	Rules []CiliumRule
	// Invalid is the message of the policy's status condition Valid when
	// it is False: the Cilium operator's validation refused the policy,
	// which is not in force ("" when valid or not judged yet).
	Invalid string
}

// CIDRSet is a CIDR less the ranges its Except lists, as a Cilium
// CIDRRule (toCIDRSet) or a NetworkPolicy ipBlock; a toCIDR entry is a
// set without Except.
type CIDRSet struct {
	CIDR   string
	Except []string
}

// CiliumRule is one rule of a Cilium policy.
type CiliumRule struct {
	// EndpointSelector selects the pod endpoints the rule applies to (nil:
	// the rule selects nodes, not pods).
	EndpointSelector *metav1.LabelSelector
	// EgressDeny are the CIDR sets its egressDeny rules deny (toCIDR and
	// toCIDRSet).
	EgressDeny []CIDRSet
	// Egress are its egress (allow) rules.
	Egress []CiliumEgress
	// DefaultDenyEgress is enableDefaultDeny.egress; nil when not set.
	DefaultDenyEgress *bool
}

// CiliumEgress is one egress allow rule, by the destinations it allows.
type CiliumEgress struct {
	// All is set when the rule names no destination (only toPorts, or
	// nothing): it allows every destination.
	All bool
	// CIDRs are its toCIDR and toCIDRSet (a NetworkPolicy's ipBlocks).
	CIDRs []CIDRSet
	// Entities are its toEntities.
	Entities []string
	// Endpoints are its toEndpoints selectors (a NetworkPolicy's pod and
	// namespace selectors are left out: they select pods only).
	Endpoints []metav1.LabelSelector
	// Other names the destination fields the doctor does not evaluate
	// (toFQDNs, toServices, toGroups, toNodes, toRequires, icmps).
	Other []string
}
