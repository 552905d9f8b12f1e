package talosfake

import (
	"cmp"
	"context"
	"fmt"
	"log/slog"
	"net/netip"
	"slices"
	"sync"
	"time"

	"github.com/ohmytalos/ohmytalos/internal/sandbox/kubereal"
	"github.com/ohmytalos/ohmytalos/internal/sandbox/kubereal/kubebin"
)

// Defaults of ClusterOptions.
const (
	// DefaultServicesDelay is how long after the API comes up a node's
	// services (etcd, time sync) become ready for Bootstrap.
	DefaultServicesDelay = 150 * time.Millisecond
	// DefaultRebootDelay is how long a rebooting node's API is away.
	DefaultRebootDelay = 300 * time.Millisecond
	// DefaultVIPRetry is how long a control plane waits before it campaigns
	// for the VIP again after a failed claim: Talos' campaignRetryInterval
	// (internal/app/machined/pkg/controllers/network/operator/vip.go).
	DefaultVIPRetry = time.Second
)

// Cluster is the registry shared by all fake Talos nodes of one sandbox.
// Several Talos clusters may coexist in it, keyed by cluster.id from each
// node's machine config; etcd state, bootstrap count and the VIP holder are
// kept per Talos cluster.
type Cluster struct {
	opts     ClusterOptions
	ctx      context.Context // ends with Close
	cancel   context.CancelFunc
	reals    []*realKube
	mu       sync.Mutex
	nodes    map[int64]*Node
	seq      uint64
	clusters map[string]*talosCluster
	// persisted is the config each server keeps on its STATE partition once
	// one was applied through the API; it wins over user_data on the next
	// boot. Hetzner never reuses server IDs. A nil entry means STATE was
	// wiped (reset): the server boots into maintenance mode.
	persisted map[int64][]byte
	// installed is what an in-place upgrade wrote to a server's disk.
	installed map[int64]installInfo
	// failUpgrade lists servers whose upgrades fail (fault injection).
	failUpgrade map[int64]bool
	// deleted lists servers forgotten with ForgetServer.
	deleted map[int64]bool
	// pulls decides which image pulls fail per server (registryfault.go).
	pulls registryFaults
}

// installInfo is the Talos version and schematic installed on a disk.
type installInfo struct {
	version, schematic string
}

// talosCluster is the shared state of one Talos cluster (one cluster.id).
type talosCluster struct {
	id, name   string
	bootstraps int
	// bootstrapNode is the server ID etcd was bootstrapped on; 0 before bootstrap.
	bootstrapNode int64
	// members are the etcd members in join order; a member whose server is
	// down or gone stays one until it is removed, as in etcd.
	members []*etcdMember
	joins   uint64
	// leader is the server ID of the etcd leader.
	leader int64
	// vipLeader won the VIP election and is claiming (or holds) the VIP;
	// vipHolder holds it (its claim through the Hetzner API succeeded).
	vipLeader, vipHolder int64
	vipGen               uint64
	// recovery is the snapshot uploaded with EtcdRecover, per server.
	recovery map[int64][]byte
	// restored is the keyspace (member names) of the snapshot etcd was
	// last bootstrapped from with RecoverEtcd.
	restored []string
	// real is the cluster's real Kubernetes control plane
	// (ClusterOptions.RealKubernetes).
	real *realKube
}

// etcdMember is one member of a Talos cluster's etcd.
type etcdMember struct {
	serverID int64
	id       uint64
	name     string
	host     string
}

// ClusterOptions connect the fake Talos nodes to the rest of the sandbox.
type ClusterOptions struct {
	// HCloudEndpoint is the Hetzner API the nodes' Hetzner integrations
	// (the HCloud VIP, the cloud controller) talk to, as HCLOUD_ENDPOINT
	// would set it; "" means none is reachable.
	HCloudEndpoint string
	// Admit reports whether a connection from remote to port of the server
	// gets through the server's Hetzner firewalls; nil admits everything.
	Admit func(serverID int64, remote netip.Addr, port int) bool
	// ServicesDelay is the default NodeOptions.ServicesDelay; 0 means
	// DefaultServicesDelay.
	ServicesDelay time.Duration
	// RebootDelay is how long a rebooting node's API is away; 0 means
	// DefaultRebootDelay.
	RebootDelay time.Duration
	// VIPRetry is the VIP campaign retry interval; 0 means DefaultVIPRetry.
	VIPRetry time.Duration
	// Registries are the hosts that serve Image Factory installers besides
	// factory.talos.dev: the sandbox's factory, whose host the product
	// puts in installer references.
	Registries []string
	// Logger receives what machined would log (VIP claims and their
	// failures); nil discards it.
	Logger *slog.Logger
	// RealKubernetes, when set, serves each cluster's Kubernetes API on
	// its control planes' PublicIP:6443 from a real control plane run
	// with these binaries (kubereal), with simulated kubelets as its
	// clients and Talos' own side (kubelet registration and restarts,
	// node labels and taints, its CRDs) acting on it; nil serves no
	// Kubernetes API (KubeErr says so), for tests of the Talos side only.
	// It is called when a cluster's control plane starts, and may wait for
	// a build (kubebin.Build.Wait); Built hands over binaries at hand.
	RealKubernetes func(context.Context) (kubebin.Binaries, error)
	// RealKubernetesDir holds the real control planes' state ("" for the
	// system's temp dir).
	RealKubernetesDir string
	// ImagePullDelay is how long a real-Kubernetes node's kubelet takes to
	// pull an image (each once per node); nil pulls at once.
	ImagePullDelay func(image string) time.Duration
	// KubeTiming paces the real control planes' simulated kubelets and
	// controllers (zero fields keep kubereal's defaults).
	KubeTiming kubereal.Timing
}

// Built is a ClusterOptions.RealKubernetes for binaries already built.
func Built(b kubebin.Binaries) func(context.Context) (kubebin.Binaries, error) {
	return func(context.Context) (kubebin.Binaries, error) { return b, nil }
}

// NewCluster returns an empty registry.
func NewCluster(o ClusterOptions) *Cluster {
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}

	ctx, cancel := context.WithCancel(context.Background())

	return &Cluster{
		ctx:         ctx,
		cancel:      cancel,
		opts:        o,
		nodes:       map[int64]*Node{},
		clusters:    map[string]*talosCluster{},
		persisted:   map[int64][]byte{},
		installed:   map[int64]installInfo{},
		failUpgrade: map[int64]bool{},
		deleted:     map[int64]bool{},
	}
}

func (c *Cluster) servicesDelay() time.Duration {
	return cmp.Or(c.opts.ServicesDelay, DefaultServicesDelay)
}

func (c *Cluster) rebootDelay() time.Duration {
	return cmp.Or(c.opts.RebootDelay, DefaultRebootDelay)
}

func (c *Cluster) vipRetry() time.Duration {
	return cmp.Or(c.opts.VIPRetry, DefaultVIPRetry)
}

// StartNode boots a fake Talos node for a fake Hetzner server. The API
// listens on o.PublicIP:o.Port once o.BootDelay has passed; before that
// connections are refused, as with a server that is still booting. A server
// that had a config applied (or staged) through the API boots with that one
// instead of o.MachineConfig, as Talos boots from its STATE partition; a
// server without any config boots into maintenance mode.
func (c *Cluster) StartNode(ctx context.Context, o NodeOptions) (*Node, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("start fake Talos node %q: %w", o.Name, err)
	}

	if o.ServerID <= 0 {
		return nil, fmt.Errorf("start fake Talos node %q: server ID %d is not a Hetzner server ID (must be > 0)", o.Name, o.ServerID)
	}

	c.mu.Lock()
	if saved, ok := c.persisted[o.ServerID]; ok {
		o.MachineConfig = saved
	}

	if inst, ok := c.installed[o.ServerID]; ok {
		o.TalosVersion, o.SchematicID = inst.version, inst.schematic
	}
	c.mu.Unlock()

	cfg := maintenanceConfig(o.ServerID)

	if len(o.MachineConfig) > 0 {
		var err error

		cfg, err = parseNodeConfig(o.MachineConfig)
		if err != nil {
			return nil, fmt.Errorf("start fake Talos node %q (server %d): %w; pass the machine config generated for this cluster as user_data", o.Name, o.ServerID, err)
		}
	}

	c.mu.Lock()
	_, dup := c.nodes[o.ServerID]
	c.mu.Unlock()

	if dup {
		return nil, fmt.Errorf("start fake Talos node %q: server %d already runs a node; stop it first", o.Name, o.ServerID)
	}

	n, err := newNode(c, o, cfg)
	if err != nil {
		return nil, err
	}

	if err := n.start(); err != nil {
		n.cancel()

		return nil, err
	}

	c.mu.Lock()

	if _, dup := c.nodes[o.ServerID]; dup {
		c.mu.Unlock()
		n.Stop()

		return nil, fmt.Errorf("start fake Talos node %q: server %d already runs a node; stop it first", o.Name, o.ServerID)
	}

	c.seq++
	n.seq = c.seq
	c.nodes[o.ServerID] = n
	c.reconcileLocked(c.clusterLocked(cfg))

	c.mu.Unlock()

	return n, nil
}

// StopNode stops the node of a server, if one runs (deleting or powering off
// a server). Unknown IDs are ignored.
func (c *Cluster) StopNode(serverID int64) {
	c.mu.Lock()
	n := c.nodes[serverID]
	c.mu.Unlock()

	if n != nil {
		n.Stop()
	}
}

// ForgetServer stops the server's node and forgets its disk (the server was
// deleted). Its etcd membership stays until a member removes it, as in
// etcd; once no member of a cluster has a server any more, that cluster's
// etcd is gone and it can be bootstrapped anew.
func (c *Cluster) ForgetServer(serverID int64) {
	c.StopNode(serverID)

	c.mu.Lock()
	defer c.mu.Unlock()

	delete(c.persisted, serverID)
	delete(c.installed, serverID)
	c.deleted[serverID] = true

	for id, tc := range c.clusters {
		if !slices.ContainsFunc(tc.members, func(m *etcdMember) bool { return m.serverID == serverID }) {
			continue
		}

		alive := slices.ContainsFunc(tc.members, func(m *etcdMember) bool { return !c.deleted[m.serverID] })
		if !alive {
			delete(c.clusters, id)

			// Its real control plane goes with its etcd (Close waits).
			if tc.real != nil {
				go tc.real.stop()
			}
		}
	}
}

// FailUpgrade makes every later upgrade of that server fail (the installer
// exits non-zero) until AllowUpgrade.
func (c *Cluster) FailUpgrade(serverID int64) {
	c.mu.Lock()
	defer c.mu.Unlock()

	c.failUpgrade[serverID] = true
}

// AllowUpgrade undoes FailUpgrade.
func (c *Cluster) AllowUpgrade(serverID int64) {
	c.mu.Lock()
	defer c.mu.Unlock()

	delete(c.failUpgrade, serverID)
}

// Node returns the running node of a server, or nil.
func (c *Cluster) Node(serverID int64) *Node {
	c.mu.Lock()
	defer c.mu.Unlock()

	return c.nodes[serverID]
}

// Bootstraps reports how many Bootstrap calls succeeded for the Talos cluster
// with that name (cluster.clusterName).
func (c *Cluster) Bootstraps(clusterName string) int {
	c.mu.Lock()
	defer c.mu.Unlock()

	total := 0

	for _, tc := range c.clusters {
		if tc.name == clusterName {
			total += tc.bootstraps
		}
	}

	return total
}

// VIPHolders lists the names of the nodes of that Talos cluster that
// currently have the VIP assigned (at most one when all is well).
func (c *Cluster) VIPHolders(clusterName string) []string {
	c.mu.Lock()
	defer c.mu.Unlock()

	var names []string

	for _, n := range c.sortedNodesLocked() {
		if n.cfg.clusterName == clusterName && n.vipHeld.IsValid() {
			names = append(names, n.opts.Name)
		}
	}

	return names
}

// EtcdMembers lists the names of the etcd members of that Talos cluster,
// in join order (members whose server is gone included).
func (c *Cluster) EtcdMembers(clusterName string) []string {
	c.mu.Lock()
	defer c.mu.Unlock()

	var names []string

	for _, tc := range c.clusters {
		if tc.name != clusterName {
			continue
		}

		for _, m := range tc.members {
			names = append(names, m.name)
		}
	}

	return names
}

// remove forgets a stopped node and hands its VIP over.
func (c *Cluster) remove(n *Node) {
	c.mu.Lock()
	defer c.mu.Unlock()

	if c.nodes[n.opts.ServerID] != n {
		return
	}

	delete(c.nodes, n.opts.ServerID)

	n.setVIP(netip.Addr{})

	c.reconcileLocked(c.clusters[n.cfg.clusterID])
}

func (c *Cluster) clusterLocked(cfg *nodeConfig) *talosCluster {
	if cfg.maintenance {
		return nil
	}

	tc := c.clusters[cfg.clusterID]
	if tc == nil {
		tc = &talosCluster{id: cfg.clusterID, name: cfg.clusterName, recovery: map[int64][]byte{}}
		c.clusters[cfg.clusterID] = tc
	}

	return tc
}

func (c *Cluster) sortedNodesLocked() []*Node {
	out := make([]*Node, 0, len(c.nodes))
	for _, n := range c.nodes {
		out = append(out, n)
	}

	slices.SortFunc(out, func(a, b *Node) int { return cmp.Compare(a.seq, b.seq) })

	return out
}

// osCALocked finds the OS CA with its key for a Talos cluster: a worker's
// config carries only the certificate, and Talos workers get their API
// certificate from trustd on a control plane.
func (c *Cluster) osCALocked(n *Node) *nodeConfig {
	if n.cfg.osCA != nil && len(n.cfg.osCA.Key) > 0 {
		return n.cfg
	}

	for _, other := range c.sortedNodesLocked() {
		if other.cfg.clusterID == n.cfg.clusterID && other.cfg.osCA != nil && len(other.cfg.osCA.Key) > 0 &&
			string(other.cfg.osCA.Crt) == string(n.cfg.osCA.Crt) {
			return other.cfg
		}
	}

	return nil
}

func (c *Cluster) reconcileAllLocked() {
	for _, tc := range c.clusters {
		c.reconcileLocked(tc)
	}
}

// reconcileLocked brings a Talos cluster in line after a change: running
// control planes join a bootstrapped etcd (while it has quorum), every
// healthy member serves the Kubernetes API (kube-apiserver runs on each
// control plane once etcd is up), and the VIP is campaigned for.
func (c *Cluster) reconcileLocked(tc *talosCluster) {
	if tc == nil {
		return
	}

	if tc.bootstrapNode != 0 {
		for _, n := range c.sortedNodesLocked() {
			if n.cfg.clusterID == tc.id && n.cfg.controlPlane() && !n.down && !n.etcdLeft &&
				tc.member(n.opts.ServerID) == nil && c.quorumLocked(tc) {
				tc.join(n)
			}
		}
	}

	if !c.healthyLocked(tc, tc.leader) {
		tc.leader = 0

		for _, m := range tc.members {
			if c.healthyLocked(tc, m.serverID) {
				tc.leader = m.serverID

				break
			}
		}
	}

	for _, m := range tc.members {
		if n := c.nodes[m.serverID]; n != nil && c.healthyLocked(tc, m.serverID) {
			n.startKubeAPILocked()
		}
	}

	c.campaignLocked(tc)
}

func (tc *talosCluster) member(serverID int64) *etcdMember {
	for _, m := range tc.members {
		if m.serverID == serverID {
			return m
		}
	}

	return nil
}

func (tc *talosCluster) join(n *Node) {
	tc.joins++
	tc.members = append(tc.members, &etcdMember{
		serverID: n.opts.ServerID,
		id:       memberID(n.opts.ServerID, tc.joins),
		name:     n.opts.Name,
		host:     n.etcdAddr(),
	})
}

// healthyLocked: the member's node runs, is up, belongs to the cluster and
// still runs etcd.
func (c *Cluster) healthyLocked(tc *talosCluster, serverID int64) bool {
	n := c.nodes[serverID]

	return n != nil && !n.down && !n.etcdLeft && n.cfg.clusterID == tc.id && tc.member(serverID) != nil
}

// quorumLocked: a majority of the members is healthy.
func (c *Cluster) quorumLocked(tc *talosCluster) bool {
	if len(tc.members) == 0 {
		return true
	}

	healthy := 0

	for _, m := range tc.members {
		if c.healthyLocked(tc, m.serverID) {
			healthy++
		}
	}

	return healthy >= len(tc.members)/2+1
}
