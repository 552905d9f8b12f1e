package talosfake

import (
	"context"
	"encoding/binary"
	"fmt"
	"net"
	"net/netip"

	"github.com/cosi-project/runtime/pkg/resource"
	"github.com/cosi-project/runtime/pkg/resource/meta"
	"github.com/cosi-project/runtime/pkg/state"
	"github.com/siderolabs/talos/pkg/machinery/extensions"
	"github.com/siderolabs/talos/pkg/machinery/nethelpers"
	configres "github.com/siderolabs/talos/pkg/machinery/resources/config"
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
// private one eth1. A server has a public NIC when it has a public IPv4 or
// IPv6 (an IPv6-only server still has eth0); only a server without any
// public address has its private NIC as eth0. Hetzner hands out public IPv4s
// as /32, public IPv6 as a /64 and private network addresses as /32 (routes
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

	if o.PublicIP != "" || o.PublicIPv6 != "" {
		var addrs []netip.Prefix

		if o.PublicIP != "" {
			addr := netip.MustParseAddr(o.PublicIP)
			addrs = append(addrs, netip.PrefixFrom(addr, addr.BitLen()))
		}

		if o.PublicIPv6 != "" {
			addrs = append(addrs, netip.PrefixFrom(netip.MustParseAddr(o.PublicIPv6), 64))
		}

		links = append(links, linkInfo{
			name: fmt.Sprintf("eth%d", next-2), index: next, mtu: 1500, mac: mac(0x96),
			addrs: addrs,
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
		network.RouteStatusExtension{}.ResourceDefinition(),
		network.HostnameStatusExtension{}.ResourceDefinition(),
		runtime.VersionExtension{}.ResourceDefinition(),
		runtime.ExtensionStatusExtension{}.ResourceDefinition(),
		(&configres.MachineConfig{}).ResourceDefinition(),
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

	if err := n.writeRoutes(ctx, n.wantRoutes()); err != nil {
		return err
	}

	hn := network.NewHostnameStatus(network.NamespaceName, network.HostnameID)
	hn.TypedSpec().Hostname = n.opts.Name

	if err := n.res.Create(ctx, hn); err != nil {
		return fmt.Errorf("create hostname status: %w", err)
	}

	n.cluster.mu.Lock()
	n.publishConfigLocked()
	n.cluster.mu.Unlock()

	return n.writeInstalled(ctx, n.opts.TalosVersion, n.opts.SchematicID)
}

// schematicExtensionID is the ExtensionStatus ID of the Image Factory's
// schematic pseudo-extension: machined names extension statuses after their
// image without ".sqsh"
// (internal/app/machined/pkg/controllers/runtime/extension_status.go).
const schematicExtensionID = "schematic"

// writeInstalled reports the installed Talos version and the Image Factory
// schematic the way Talos does: runtime.Version, and an ExtensionStatus
// named "schematic" whose version is the schematic ID, author "Image
// Factory" (Talos' ImageFactorySchematicController reads exactly that,
// internal/app/machined/pkg/controllers/runtime/image_factory_schematic.go).
func (n *Node) writeInstalled(ctx context.Context, version, schematic string) error {
	v := runtime.NewVersion()
	v.TypedSpec().Version = version
	v.TypedSpec().Name = "Talos"

	if err := upsert(ctx, n.res, v); err != nil {
		return fmt.Errorf("write version: %w", err)
	}

	md := resource.NewMetadata(runtime.NamespaceName, runtime.ExtensionStatusType, schematicExtensionID, resource.VersionUndefined)

	if schematic == "" {
		if err := n.res.Destroy(ctx, md); err != nil && !state.IsNotFoundError(err) {
			return fmt.Errorf("remove schematic extension: %w", err)
		}

		return nil
	}

	ext := runtime.NewExtensionStatus(runtime.NamespaceName, schematicExtensionID)
	ext.TypedSpec().Image = schematicExtensionID + ".sqsh"
	ext.TypedSpec().Metadata = extensions.Metadata{
		Name:    "schematic",
		Version: schematic,
		Author:  "Image Factory (https://factory.talos.dev)",
	}

	if err := upsert(ctx, n.res, ext); err != nil {
		return fmt.Errorf("write schematic extension: %w", err)
	}

	return nil
}

// upsert creates r or replaces the resource with its ID.
func upsert(ctx context.Context, st state.State, r resource.Resource) error {
	cur, err := st.Get(ctx, r.Metadata())
	if err != nil {
		if !state.IsNotFoundError(err) {
			return err //nolint:wrapcheck // wrapped by the caller
		}

		return st.Create(ctx, r) //nolint:wrapcheck // wrapped by the caller
	}

	r.Metadata().SetVersion(cur.Metadata().Version())

	return st.Update(ctx, r) //nolint:wrapcheck // wrapped by the caller
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
