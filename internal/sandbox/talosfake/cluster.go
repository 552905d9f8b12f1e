package talosfake

import (
	"cmp"
	"context"
	"fmt"
	"net/netip"
	"slices"
	"sync"
)

// Cluster is the registry shared by all fake Talos nodes of one sandbox.
// Several Talos clusters may coexist in it, keyed by cluster.id from each
// node's machine config; etcd state, bootstrap count and the VIP holder are
// kept per Talos cluster.
type Cluster struct {
	opts     ClusterOptions
	mu       sync.Mutex
	nodes    map[int64]*Node
	seq      uint64
	clusters map[string]*talosCluster
	// persisted is the config each server keeps on its STATE partition once
	// one was applied through the API; it wins over user_data on the next
	// boot. Hetzner never reuses server IDs.
	persisted map[int64][]byte
}

// talosCluster is the shared state of one Talos cluster (one cluster.id).
type talosCluster struct {
	id, name   string
	bootstraps int
	// bootstrapNode is the server ID etcd was bootstrapped on; 0 before bootstrap.
	bootstrapNode int64
	// vipHolder is the server ID currently holding the VIP; 0 when nobody does.
	vipHolder int64
	// kube is the cluster's Kubernetes API store, once a control plane serves it.
	kube *kubeCluster
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
}

// NewCluster returns an empty registry.
func NewCluster(o ClusterOptions) *Cluster {
	return &Cluster{
		opts:      o,
		nodes:     map[int64]*Node{},
		clusters:  map[string]*talosCluster{},
		persisted: map[int64][]byte{},
	}
}

// StartNode boots a fake Talos node for a fake Hetzner server. The API
// listens on o.PublicIP:o.Port once o.BootDelay has passed; before that
// connections are refused, as with a server that is still booting. A server
// that had a config applied (or staged) through the API boots with that one
// instead of o.MachineConfig, as Talos boots from its STATE partition.
func (c *Cluster) StartNode(ctx context.Context, o NodeOptions) (*Node, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("start fake Talos node %q: %w", o.Name, err)
	}

	c.mu.Lock()
	if saved, ok := c.persisted[o.ServerID]; ok {
		o.MachineConfig = saved
	}
	c.mu.Unlock()

	if o.ServerID <= 0 {
		return nil, fmt.Errorf("start fake Talos node %q: server ID %d is not a Hetzner server ID (must be > 0)", o.Name, o.ServerID)
	}

	cfg, err := parseNodeConfig(o.MachineConfig)
	if err != nil {
		return nil, fmt.Errorf("start fake Talos node %q (server %d): %w; pass the machine config generated for this cluster as user_data", o.Name, o.ServerID, err)
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

// remove forgets a stopped node and hands its VIP over.
func (c *Cluster) remove(n *Node) {
	c.mu.Lock()
	defer c.mu.Unlock()

	if c.nodes[n.opts.ServerID] != n {
		return
	}

	delete(c.nodes, n.opts.ServerID)

	n.setVIP(netip.Addr{})

	if tc := c.clusters[n.cfg.clusterID]; tc != nil {
		if tc.vipHolder == n.opts.ServerID {
			tc.vipHolder = 0
		}

		c.reconcileLocked(tc)
	}
}

func (c *Cluster) clusterLocked(cfg *nodeConfig) *talosCluster {
	tc := c.clusters[cfg.clusterID]
	if tc == nil {
		tc = &talosCluster{id: cfg.clusterID, name: cfg.clusterName}
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

// membersLocked lists the etcd members of a Talos cluster: after bootstrap,
// every running control plane of that cluster (they join by themselves).
func (c *Cluster) membersLocked(tc *talosCluster) []*Node {
	if tc == nil || tc.bootstrapNode == 0 {
		return nil
	}

	var out []*Node

	for _, n := range c.sortedNodesLocked() {
		if n.cfg.clusterID == tc.id && n.cfg.controlPlane() {
			out = append(out, n)
		}
	}

	return out
}

// osCALocked finds the OS CA with its key for a Talos cluster: a worker's
// config carries only the certificate, and Talos workers get their API
// certificate from trustd on a control plane.
func (c *Cluster) osCALocked(n *Node) *nodeConfig {
	if len(n.cfg.osCA.Key) > 0 {
		return n.cfg
	}

	for _, other := range c.sortedNodesLocked() {
		if other.cfg.clusterID == n.cfg.clusterID && len(other.cfg.osCA.Key) > 0 &&
			string(other.cfg.osCA.Crt) == string(n.cfg.osCA.Crt) {
			return other.cfg
		}
	}

	return nil
}

// reconcileLocked brings a Talos cluster in line after a membership change:
// every etcd member serves the Kubernetes API (kube-apiserver runs on each
// control plane once etcd is up), and exactly one eligible control plane
// holds the VIP. Talos' VIP operator runs only once etcd is up and elects a
// holder through etcd; a VIP on a link that does not exist on the node is
// never configured.
func (c *Cluster) reconcileLocked(tc *talosCluster) {
	members := c.membersLocked(tc)

	for _, m := range members {
		m.startKubeAPILocked()
	}

	eligible := func(n *Node) bool {
		return n.cfg.hasVIP && n.hasLink(n.cfg.vipLink)
	}

	holder := c.nodes[tc.vipHolder]
	if holder == nil || !slices.Contains(members, holder) || !eligible(holder) {
		holder = nil

		for _, m := range members {
			if eligible(m) {
				holder = m

				break
			}
		}
	}

	tc.vipHolder = 0
	if holder != nil {
		tc.vipHolder = holder.opts.ServerID
	}

	for _, n := range c.nodes {
		if n.cfg.clusterID != tc.id {
			continue
		}

		want := netip.Addr{}
		if n == holder {
			want = n.cfg.vip
		}

		if want != n.vipHeld || (want.IsValid() && n.vipLinkHeld != n.cfg.vipLink) {
			n.setVIP(want)
		}
	}
}
