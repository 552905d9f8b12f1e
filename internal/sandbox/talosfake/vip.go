package talosfake

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"time"

	"github.com/hetznercloud/hcloud-go/v2/hcloud"
)

// hcloudCallTimeout bounds one VIP claim against the Hetzner API.
const hcloudCallTimeout = 15 * time.Second

// vipClaim is what a claim needs from the node's config, read under the lock.
type vipClaim struct {
	token, version string
	vip            netip.Addr
}

// campaignLocked runs the VIP election of a Talos cluster, as Talos' VIP
// operator does through etcd
// (internal/app/machined/pkg/controllers/network/operator/vip.go): only a
// healthy etcd member whose config names an existing link campaigns; the
// winner acquires the VIP through its handler and only then configures the
// address. An HCloud VIP is acquired through the Hetzner API (vipClaim,
// outside the lock); a failed claim resigns, is logged, and the node
// campaigns again after VIPRetry, so with a wrong token nobody holds it.
func (c *Cluster) campaignLocked(tc *talosCluster) {
	eligible := func(n *Node) bool {
		return n != nil && c.healthyLocked(tc, n.opts.ServerID) && c.quorumLocked(tc) &&
			n.cfg.hasVIP && n.hasLink(n.cfg.vipLink)
	}

	if tc.vipLeader != 0 && !eligible(c.nodes[tc.vipLeader]) {
		if old := c.nodes[tc.vipLeader]; old != nil && tc.vipHolder == old.opts.ServerID && !old.down && old.cfg.vipHCloud {
			// Resigning while running: Talos' handler releases the alias IP.
			go c.releaseVIP(old, old.cfg.vipHCloudToken, old.cfg.vip, old.opts.TalosVersion)
		}

		tc.vipLeader, tc.vipHolder = 0, 0
		tc.vipGen++
	}

	if tc.vipLeader == 0 {
		c.electLocked(tc, eligible)
	}

	for _, n := range c.nodes {
		if n.cfg.clusterID != tc.id {
			continue
		}

		want := netip.Addr{}
		if tc.vipHolder != 0 && n.opts.ServerID == tc.vipHolder {
			want = n.cfg.vip
		}

		if want != n.vipHeld || (want.IsValid() && n.vipLinkHeld != n.cfg.vipLink) {
			n.setVIP(want)
		}
	}
}

// electLocked picks the next VIP leader among the eligible members not
// backing off after a failed claim, and starts its claim.
func (c *Cluster) electLocked(tc *talosCluster, eligible func(*Node) bool) {
	now := time.Now()
	retryAt := time.Time{}

	for _, m := range tc.members {
		n := c.nodes[m.serverID]
		if !eligible(n) {
			continue
		}

		if now.Before(n.vipBackoff) {
			if retryAt.IsZero() || n.vipBackoff.Before(retryAt) {
				retryAt = n.vipBackoff
			}

			continue
		}

		tc.vipLeader = n.opts.ServerID
		tc.vipGen++

		if !n.cfg.vipHCloud {
			// A Layer 2 VIP needs no API: the winner announces it at once.
			tc.vipHolder = n.opts.ServerID

			return
		}

		go c.claimVIP(tc.id, n, tc.vipGen, vipClaim{token: n.cfg.vipHCloudToken, vip: n.cfg.vip, version: n.opts.TalosVersion})

		return
	}

	if !retryAt.IsZero() {
		id := tc.id

		time.AfterFunc(time.Until(retryAt)+time.Millisecond, func() {
			c.mu.Lock()
			defer c.mu.Unlock()

			c.reconcileLocked(c.clusters[id])
		})
	}
}

// claimVIP acquires the VIP through the Hetzner API and records the outcome
// unless the election moved on meanwhile.
func (c *Cluster) claimVIP(clusterID string, n *Node, gen uint64, claim vipClaim) {
	vip := claim.vip
	ctx, cancel := context.WithTimeout(n.ctx, hcloudCallTimeout)
	err := c.acquireVIP(ctx, n.opts.ServerID, claim)

	cancel()

	c.mu.Lock()
	defer c.mu.Unlock()

	tc := c.clusters[clusterID]
	if tc == nil || tc.vipGen != gen || tc.vipLeader != n.opts.ServerID {
		return
	}

	if err != nil {
		c.opts.Logger.Warn("campaign failure", "node", n.opts.Name, "ip", vip.String(), "error", err.Error())

		n.vipBackoff = time.Now().Add(c.vipRetry())
		tc.vipLeader = 0
		tc.vipGen++
		c.reconcileLocked(tc)

		return
	}

	c.opts.Logger.Info("enabled shared IP", "node", n.opts.Name, "ip", vip.String())

	tc.vipHolder = n.opts.ServerID
	c.reconcileLocked(tc)
}

func (c *Cluster) hcloudClient(token, talosVersion string) (*hcloud.Client, error) {
	if c.opts.HCloudEndpoint == "" {
		return nil, errors.New("the Hetzner API is not reachable from this node")
	}

	return hcloud.NewClient(
		hcloud.WithToken(token),
		hcloud.WithEndpoint(c.opts.HCloudEndpoint),
		hcloud.WithApplication("Talos", talosVersion),
	), nil
}

// acquireVIP does what Talos' HCloudHandler does
// (internal/app/machined/pkg/controllers/network/operator/vip/hcloud.go):
// GetNetworkAndDeviceIDs finds the server by its metadata instance ID (the
// server ID) and the private network whose ip_range contains the VIP;
// Acquire removes the alias IP from the server that has it, then sets it on
// this server with change_alias_ips.
func (c *Cluster) acquireVIP(ctx context.Context, serverID int64, claim vipClaim) error {
	vip := claim.vip

	cl, err := c.hcloudClient(claim.token, claim.version)
	if err != nil {
		return fmt.Errorf("error getting server info: %w", err)
	}

	networkID, err := vipNetworkID(ctx, cl, serverID, vip)
	if err != nil {
		return err
	}

	if networkID == 0 {
		return fmt.Errorf("error assigning %q to server %d in network %d: floating IP / alias IP is not found", vip, serverID, networkID)
	}

	servers, err := cl.Server.All(ctx)
	if err != nil {
		return fmt.Errorf("error getting server list: %w", err)
	}

	if old := serverWithAlias(servers, networkID, vip); old != 0 {
		if _, _, err := cl.Server.ChangeAliasIPs(ctx, &hcloud.Server{ID: old}, hcloud.ServerChangeAliasIPsOpts{
			Network: &hcloud.Network{ID: networkID}, AliasIPs: []net.IP{},
		}); err != nil {
			return fmt.Errorf("error remove Hetzner Cloud IP alias %q from server %d: %w", vip, old, err)
		}
	}

	if _, _, err := cl.Server.ChangeAliasIPs(ctx, &hcloud.Server{ID: serverID}, hcloud.ServerChangeAliasIPsOpts{
		Network: &hcloud.Network{ID: networkID}, AliasIPs: []net.IP{vip.AsSlice()},
	}); err != nil {
		return fmt.Errorf("error change alias IPs %q to server %d: %w", vip, serverID, err)
	}

	return nil
}

// vipNetworkID is GetNetworkAndDeviceIDs: 0 for a public VIP (a floating IP).
func vipNetworkID(ctx context.Context, cl *hcloud.Client, serverID int64, vip netip.Addr) (int64, error) {
	server, _, err := cl.Server.GetByID(ctx, serverID)
	if err != nil {
		return 0, fmt.Errorf("error getting server info: %w", err)
	}

	if server == nil {
		return 0, fmt.Errorf("error getting server info: server %d not found", serverID)
	}

	if !vip.IsPrivate() {
		return 0, nil
	}

	if len(server.PrivateNet) == 0 {
		return 0, fmt.Errorf("trying to assign private vip (alias IP) %q, but no private network is assigned to the server", vip)
	}

	for _, pn := range server.PrivateNet {
		if pn.Network == nil {
			continue
		}

		network, _, err := cl.Network.GetByID(ctx, pn.Network.ID)
		if err != nil {
			return 0, fmt.Errorf("error getting network info: %w", err)
		}

		if network != nil && network.IPRange != nil && network.IPRange.Contains(vip.AsSlice()) {
			return network.ID, nil
		}
	}

	return 0, nil
}

func serverWithAlias(servers []*hcloud.Server, networkID int64, vip netip.Addr) int64 {
	for _, s := range servers {
		for _, pn := range s.PrivateNet {
			if pn.Network == nil || pn.Network.ID != networkID {
				continue
			}

			for _, a := range pn.Aliases {
				if a.Equal(vip.AsSlice()) {
					return s.ID
				}
			}
		}
	}

	return 0
}

// releaseVIP is HCloudHandler.Release: clear this server's alias IPs in
// the VIP's network. Best effort, as in Talos (failures are logged).
func (c *Cluster) releaseVIP(n *Node, token string, vip netip.Addr, version string) {
	ctx, cancel := context.WithTimeout(context.Background(), hcloudCallTimeout)
	defer cancel()

	err := func() error {
		cl, err := c.hcloudClient(token, version)
		if err != nil {
			return err
		}

		networkID, err := vipNetworkID(ctx, cl, n.opts.ServerID, vip)
		if err != nil || networkID == 0 {
			return err
		}

		_, _, err = cl.Server.ChangeAliasIPs(ctx, &hcloud.Server{ID: n.opts.ServerID}, hcloud.ServerChangeAliasIPsOpts{
			Network: &hcloud.Network{ID: networkID}, AliasIPs: []net.IP{},
		})

		return err //nolint:wrapcheck // logged below with the context
	}()
	if err != nil {
		c.opts.Logger.Info("failed disabling shared IP", "node", n.opts.Name, "error", err.Error())
	}
}
