// Package talossource is the doctor's view of the nodes through the Talos
// API (links, addresses, routes, versions, etcd members): the adapter from
// talosapi's client to the doctor's TalosSource, beside hcloudsource and
// kubesource.
package talossource

import (
	"context"
	"fmt"
	"strconv"
	"sync"

	"github.com/ohmytalos/ohmytalos/internal/doctor"
	"github.com/ohmytalos/ohmytalos/internal/talos/talosapi"
)

// VIP is the shared control-plane address as the rendered configs place
// it: the link it sits on and the address. Zero when the spec has no VIP.
type VIP struct {
	Link, Address string
}

// New returns a source that dials the Talos API with talosconfig. addr
// maps every node key the checks use (name, private IP, public IP) to the
// public IP to dial; controlPlanes are the control planes' node keys, used
// to proxy to nodes without a public address. Close it when done.
func New(talosconfig []byte, addr map[string]string, controlPlanes []string, vip VIP) *Source {
	return &Source{talosconfig: talosconfig, vip: vip, addr: addr, controlPlanes: controlPlanes, clients: map[string]*talosapi.Client{}}
}

// Source reads node state through the Talos API, one client per node.
type Source struct {
	talosconfig []byte
	vip         VIP
	addr        map[string]string // node key -> public IP
	// controlPlanes are the control planes' node keys, for proxying.
	controlPlanes []string

	mu      sync.Mutex
	clients map[string]*talosapi.Client
}

func (t *Source) client(ctx context.Context, node string) (*talosapi.Client, error) {
	ip := t.addr[node]
	if ip == "" {
		return nil, fmt.Errorf("node %s has no public address ohmytalos can reach the Talos API on", node)
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if c := t.clients[ip]; c != nil {
		return c, nil
	}
	c, err := talosapi.Connect(ctx, t.talosconfig, ip)
	if err != nil {
		return nil, err
	}
	t.clients[ip] = c
	return c, nil
}

// Close closes every client the source opened.
func (t *Source) Close() {
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, c := range t.clients {
		c.Close()
	}
}

// Links reads the node's network links.
func (t *Source) Links(ctx context.Context, node string) ([]doctor.Link, error) {
	return listOn(ctx, t.direct, node, (*talosapi.Client).Links, func(l talosapi.Link) doctor.Link {
		return doctor.Link{Name: l.Name, MTU: l.MTU, Up: l.Up}
	})
}

// Addresses reads the node's addresses.
func (t *Source) Addresses(ctx context.Context, node string) ([]doctor.Address, error) {
	return listOn(ctx, t.direct, node, (*talosapi.Client).Addresses, func(a talosapi.Address) doctor.Address {
		return doctor.Address{Link: a.Link, CIDR: a.CIDR}
	})
}

// VIPConfig reports the VIP as ohmytalos renders it into every control
// plane's config: the link and address New was given (empty without a VIP).
func (t *Source) VIPConfig(ctx context.Context, node string) (string, string, error) {
	return t.vip.Link, t.vip.Address, nil
}

// Routes reads the node's routes (network.RouteStatus). A node without a
// public address is asked through a control plane's apid, as talosctl -e
// CONTROL_PLANE -n NODE does.
func (t *Source) Routes(ctx context.Context, node string) ([]doctor.Route, error) {
	return listOn(ctx, t.viaControlPlane, node, (*talosapi.Client).Routes, func(r talosapi.Route) doctor.Route {
		return doctor.Route{Family: r.Family, Destination: r.Destination, Gateway: r.Gateway, Link: r.Link}
	})
}

// dialer gives the client to ask about node and the context to ask with.
type dialer func(ctx context.Context, node string) (*talosapi.Client, context.Context, error)

// listOn asks node, through dial, for a list with get and converts each
// item with conv; what get returned before an error is kept.
func listOn[S, D any](ctx context.Context, dial dialer, node string, get func(*talosapi.Client, context.Context) ([]S, error), conv func(S) D) ([]D, error) {
	c, ctx, err := dial(ctx, node)
	if err != nil {
		return nil, err
	}
	in, err := get(c, ctx)
	out := make([]D, 0, len(in))
	for _, v := range in {
		out = append(out, conv(v))
	}
	return out, err
}

// direct is the node's own client.
func (t *Source) direct(ctx context.Context, node string) (*talosapi.Client, context.Context, error) {
	c, err := t.client(ctx, node)
	return c, ctx, err
}

// viaControlPlane is the node's own client when it has a public address,
// else a control plane's with the calls proxied to the node.
func (t *Source) viaControlPlane(ctx context.Context, node string) (*talosapi.Client, context.Context, error) {
	if t.addr[node] != "" {
		c, err := t.client(ctx, node)
		return c, ctx, err
	}
	for _, cp := range t.controlPlanes {
		if t.addr[cp] != "" {
			c, err := t.client(ctx, cp)
			return c, talosapi.OnNode(ctx, node), err
		}
	}
	return nil, ctx, fmt.Errorf("node %s has no public address, and no control plane has one to proxy through", node)
}

// TalosVersion reads the node's running Talos tag through the Version API.
func (t *Source) TalosVersion(ctx context.Context, node string) (string, error) {
	c, err := t.client(ctx, node)
	if err != nil {
		return "", err
	}
	return c.Version(ctx)
}

// EtcdMembers reads the etcd members as the node sees them.
func (t *Source) EtcdMembers(ctx context.Context, node string) ([]doctor.EtcdMember, error) {
	c, err := t.client(ctx, node)
	if err != nil {
		return nil, err
	}
	ms, err := c.EtcdMembers(ctx)
	out := make([]doctor.EtcdMember, 0, len(ms))
	for _, m := range ms {
		id, _ := strconv.ParseUint(m.ID, 16, 64)
		out = append(out, doctor.EtcdMember{ID: id, Name: m.Name, PeerURLs: m.PeerURLs, IsLearner: m.Learner})
	}
	return out, err
}
