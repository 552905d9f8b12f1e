package talosfake

import (
	"context"
	"encoding/binary"
	"fmt"
	"net"
	"net/netip"

	"github.com/cosi-project/runtime/pkg/resource"
	"github.com/cosi-project/runtime/pkg/resource/meta"
	"github.com/siderolabs/talos/pkg/machinery/nethelpers"
	"github.com/siderolabs/talos/pkg/machinery/resources/network"
	"github.com/siderolabs/talos/pkg/machinery/resources/runtime"
)

// linkInfo is one NIC of a fake Hetzner server.
type linkInfo struct {
	name  string
	index uint32
	mtu   uint32
	mac   net.HardwareAddr
	addrs []netip.Prefix
}

// hcloudLinks lays out the NICs as Talos names them on Hetzner Cloud: the
// hcloud platform boots with net.ifnames=0, so the public NIC is eth0 and the
// private one eth1, or eth0 when the server has no public IPv4. Hetzner hands
// out public IPv4s as /32 and private network addresses as /32 too (routes
// go through the gateway). Private networks use MTU 1450.
func hcloudLinks(o NodeOptions) []linkInfo {
	links := []linkInfo{{
		name:  "lo",
		index: 1,
		mtu:   65536,
		addrs: []netip.Prefix{netip.MustParsePrefix("127.0.0.1/8"), netip.MustParsePrefix("::1/128")},
	}}

	mac := func(prefix byte) net.HardwareAddr {
		m := make(net.HardwareAddr, 6)
		m[0], m[1] = prefix, 0x00
		binary.BigEndian.PutUint32(m[2:], uint32(o.ServerID)) //nolint:gosec // a MAC only needs to look unique

		return m
	}

	next := uint32(2)

	if o.PublicIP != "" {
		addr := netip.MustParseAddr(o.PublicIP)
		links = append(links, linkInfo{
			name: fmt.Sprintf("eth%d", next-2), index: next, mtu: 1500, mac: mac(0x96),
			addrs: []netip.Prefix{netip.PrefixFrom(addr, addr.BitLen())},
		})
		next++
	}

	if o.PrivateIP != "" {
		addr := netip.MustParseAddr(o.PrivateIP)
		links = append(links, linkInfo{
			name: fmt.Sprintf("eth%d", next-2), index: next, mtu: 1450, mac: mac(0x86),
			addrs: []netip.Prefix{netip.PrefixFrom(addr, addr.BitLen())},
		})
	}

	return links
}

func (n *Node) hasLink(name string) bool {
	for _, l := range n.links {
		if l.name == name {
			return true
		}
	}

	return false
}

func (n *Node) link(name string) *linkInfo {
	for i := range n.links {
		if n.links[i].name == name {
			return &n.links[i]
		}
	}

	return nil
}

// populateResources creates the COSI resources a booted node reports.
func (n *Node) populateResources(ctx context.Context) error {
	defs := []meta.ResourceDefinitionSpec{
		network.LinkStatusExtension{}.ResourceDefinition(),
		network.AddressStatusExtension{}.ResourceDefinition(),
		network.HostnameStatusExtension{}.ResourceDefinition(),
		runtime.VersionExtension{}.ResourceDefinition(),
	}

	for _, spec := range defs {
		rd, err := meta.NewResourceDefinition(spec)
		if err != nil {
			return fmt.Errorf("resource definition %s: %w", spec.Type, err)
		}

		if err := n.res.Create(ctx, rd); err != nil {
			return fmt.Errorf("create resource definition %s: %w", spec.Type, err)
		}
	}

	for _, l := range n.links {
		if err := n.res.Create(ctx, linkStatus(l)); err != nil {
			return fmt.Errorf("create link %s: %w", l.name, err)
		}

		for _, p := range l.addrs {
			if err := n.res.Create(ctx, addressStatus(l, p)); err != nil {
				return fmt.Errorf("create address %s on %s: %w", p, l.name, err)
			}
		}
	}

	hn := network.NewHostnameStatus(network.NamespaceName, network.HostnameID)
	hn.TypedSpec().Hostname = n.opts.Name

	if err := n.res.Create(ctx, hn); err != nil {
		return fmt.Errorf("create hostname status: %w", err)
	}

	v := runtime.NewVersion()
	v.TypedSpec().Version = n.opts.TalosVersion
	v.TypedSpec().Name = "Talos"

	if err := n.res.Create(ctx, v); err != nil {
		return fmt.Errorf("create version: %w", err)
	}

	return nil
}

func linkStatus(l linkInfo) *network.LinkStatus {
	ls := network.NewLinkStatus(network.NamespaceName, network.LinkID(l.name))
	spec := ls.TypedSpec()
	spec.Index = l.index
	spec.MTU = l.mtu

	if l.name == "lo" {
		spec.Type = nethelpers.LinkLoopbck
		spec.Flags = nethelpers.LinkFlags(nethelpers.LinkUp | nethelpers.LinkLoopback | nethelpers.LinkRunning | nethelpers.LinkLowerUp)
		spec.OperationalState = nethelpers.OperStateUnknown
		spec.QueueDisc = "noqueue"

		return ls
	}

	spec.Type = nethelpers.LinkEther
	spec.Flags = nethelpers.LinkFlags(nethelpers.LinkUp | nethelpers.LinkBroadcast | nethelpers.LinkMulticast |
		nethelpers.LinkRunning | nethelpers.LinkLowerUp)
	spec.OperationalState = nethelpers.OperStateUp
	spec.HardwareAddr = nethelpers.HardwareAddr(l.mac)
	spec.PermanentAddr = nethelpers.HardwareAddr(l.mac)
	spec.BroadcastAddr = nethelpers.HardwareAddr{0xff, 0xff, 0xff, 0xff, 0xff, 0xff}
	spec.QueueDisc = "pfifo_fast"
	spec.LinkState = true
	spec.Driver = "virtio_net"
	spec.BusPath = fmt.Sprintf("virtio%d", l.index-2)

	return ls
}

func addressStatus(l linkInfo, p netip.Prefix) *network.AddressStatus {
	as := network.NewAddressStatus(network.NamespaceName, network.AddressID(l.name, p))
	spec := as.TypedSpec()
	spec.Address = p
	spec.Local = p.Addr()
	spec.LinkIndex = l.index
	spec.LinkName = l.name
	spec.Family = nethelpers.FamilyInet4
	spec.Flags = nethelpers.AddressFlags(nethelpers.AddressPermanent)

	if p.Addr().Is6() {
		spec.Family = nethelpers.FamilyInet6
	}

	if p.Addr().IsLoopback() {
		spec.Scope = nethelpers.ScopeHost
	}

	return as
}

// setVIP assigns (valid addr) or removes (zero addr) the VIP on the link the
// config names. Called with cluster.mu held.
func (n *Node) setVIP(addr netip.Addr) {
	if n.vipHeld.IsValid() {
		id := network.AddressID(n.vipLinkHeld, netip.PrefixFrom(n.vipHeld, n.vipHeld.BitLen()))
		// In-memory state: no I/O to bound, and it must work after Stop too.
		_ = n.res.Destroy(context.Background(), resource.NewMetadata(network.NamespaceName, network.AddressStatusType, id, resource.VersionUndefined)) //nolint:errcheck // absent is fine

		n.vipHeld, n.vipLinkHeld = netip.Addr{}, ""
	}

	if !addr.IsValid() {
		return
	}

	l := n.link(n.cfg.vipLink)
	if l == nil {
		return
	}

	if err := n.res.Create(context.Background(), addressStatus(*l, netip.PrefixFrom(addr, addr.BitLen()))); err != nil {
		return
	}

	n.vipHeld, n.vipLinkHeld = addr, l.name
}
