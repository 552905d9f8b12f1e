package steps

import (
	"context"
	"fmt"
	"strconv"
	"sync"

	"github.com/ohmytalos/ohmytalos/internal/cloud"
	"github.com/ohmytalos/ohmytalos/internal/doctor"
	"github.com/ohmytalos/ohmytalos/internal/doctor/hcloudsource"
	"github.com/ohmytalos/ohmytalos/internal/doctor/kubesource"
	"github.com/ohmytalos/ohmytalos/internal/engine"
	"github.com/ohmytalos/ohmytalos/internal/spec"
	"github.com/ohmytalos/ohmytalos/internal/talos/talosapi"
)

// DoctorOptions are the doctor's command-line inputs.
type DoctorOptions struct {
	Domains  []string
	Resolver string
	RepoDir  string
	Owner    string
}

// DoctorEnv gathers what the checks read: Hetzner (when the token can be
// looked up), the Talos API (when a talosconfig is stored) and Kubernetes
// (when a kubeconfig is stored). A missing source makes its checks skip
// with the reason; it never stops the doctor. skipped explains each.
func DoctorEnv(ctx context.Context, d *Deps, env *engine.Env, o DoctorOptions) (*doctor.Env, func(), []string) {
	sp := env.Spec
	var notes []string
	de := &doctor.Env{
		ClusterName: sp.Name, NetworkCIDR: sp.Network.CIDR, VIP: sp.ControlPlane.VIP, VIPLink: vipLink(sp), PrivateCIDR: sp.ControlPlane.Subnet,
		Domains: append(append([]string{}, sp.Domains...), o.Domains...), Resolver: o.Resolver, RepoDir: o.RepoDir,
		ExternalDNSOwner: o.Owner, TalosVersion: sp.Talos.Version, KubernetesVersion: sp.Kubernetes.Version,
	}
	de.Backup, de.LastSnapshot = doctorBackup(env)
	if needs, _, err := imageNeeds(sp); err == nil {
		for _, n := range needs {
			de.ExpectedImages = append(de.ExpectedImages, doctor.ImageKey{Arch: n.key.Arch, TalosVersion: n.key.TalosVersion, SchematicID: n.key.SchematicID})
		}
	}
	public := map[string]string{}
	if c, err := d.HCloud(ctx, sp); err != nil {
		notes = append(notes, "Hetzner checks skip: "+d.Redact(err.Error()))
	} else {
		de.Cloud = hcloudsource.New(c, sp.Name)
		servers, err := ownedServers(ctx, c, env.State, sp.Name)
		if err == nil {
			for _, s := range servers {
				if s.PublicNet.IPv4.IP != nil && !s.PublicNet.IPv4.IP.IsUnspecified() {
					public[s.Labels[cloud.LabelNode]] = s.PublicNet.IPv4.IP.String()
				}
			}
		}
	}
	for _, n := range sp.Nodes() {
		ref := doctor.NodeRef{Name: n.Name, PublicIP: public[n.Name], PrivateIP: n.PrivateIP}
		if n.Role == spec.RoleControlPlane {
			de.ControlPlanes = append(de.ControlPlanes, ref)
		} else {
			de.Workers = append(de.Workers, ref)
		}
	}
	closeAll := func() {}
	if tc, err := env.State.Secret(secretTalosconfig); err != nil {
		notes = append(notes, "Talos checks skip: no talosconfig yet ("+err.Error()+")")
	} else {
		de.Talosconfig = tc
		ts := &talosSource{talosconfig: tc, spec: sp, addr: map[string]string{}, clients: map[string]*talosapi.Client{}}
		for _, r := range append(append([]doctor.NodeRef{}, de.ControlPlanes...), de.Workers...) {
			if r.PublicIP != "" {
				ts.addr[r.PrivateIP], ts.addr[r.Name], ts.addr[r.PublicIP] = r.PublicIP, r.PublicIP, r.PublicIP
			}
		}
		for _, cp := range de.ControlPlanes {
			ts.controlPlanes = append(ts.controlPlanes, cp.PrivateIP)
		}
		de.Talos = ts
		closeAll = ts.close
	}
	if kc, err := env.State.Secret(secretKubeconfig); err != nil {
		notes = append(notes, "Kubernetes checks skip: no kubeconfig yet")
	} else {
		de.Kubeconfig = kc // kubeconfig-reachable dials the servers bootstrap stored
		if ks, err := kubesource.New(kc, ""); err != nil {
			notes = append(notes, "Kubernetes checks skip: "+err.Error())
		} else {
			de.Kube = ks
			de.AddonWorkloads = addonWorkloads(sp)
		}
	}
	return de, closeAll, notes
}

// vipLink is the link the rendered configs put the VIP on: the one place
// this is decided (configs, the bootstrap check and the doctor use it).
// Talos' hcloud platform boots with net.ifnames=0: the private NIC is eth1
// behind any public NIC (IPv4 or IPv6 only), eth0 on private-only servers.
func vipLink(sp *spec.Spec) string {
	if sp.ControlPlane.VIPLink != "" {
		return sp.ControlPlane.VIPLink
	}
	if sp.PublicNetwork != nil && !sp.PublicNetwork.IPv4 && !sp.PublicNetwork.IPv6 {
		return "eth0"
	}
	return "eth1"
}

// talosSource reads node state through the Talos API, one client per node.
type talosSource struct {
	talosconfig []byte
	spec        *spec.Spec
	addr        map[string]string // node key -> public IP
	// controlPlanes are the control planes' node keys, for proxying.
	controlPlanes []string

	mu      sync.Mutex
	clients map[string]*talosapi.Client
}

func (t *talosSource) client(ctx context.Context, node string) (*talosapi.Client, error) {
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

func (t *talosSource) close() {
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, c := range t.clients {
		c.Close()
	}
}

func (t *talosSource) Links(ctx context.Context, node string) ([]doctor.Link, error) {
	c, err := t.client(ctx, node)
	if err != nil {
		return nil, err
	}
	ls, err := c.Links(ctx)
	out := make([]doctor.Link, 0, len(ls))
	for _, l := range ls {
		out = append(out, doctor.Link{Name: l.Name, MTU: l.MTU, Up: l.Up})
	}
	return out, err
}

func (t *talosSource) Addresses(ctx context.Context, node string) ([]doctor.Address, error) {
	c, err := t.client(ctx, node)
	if err != nil {
		return nil, err
	}
	as, err := c.Addresses(ctx)
	out := make([]doctor.Address, 0, len(as))
	for _, a := range as {
		out = append(out, doctor.Address{Link: a.Link, CIDR: a.CIDR})
	}
	return out, err
}

// VIPConfig reports the VIP as ohmytalos renders it into every control
// plane's config (configs are regenerated from the spec, never edited).
func (t *talosSource) VIPConfig(ctx context.Context, node string) (string, string, error) {
	if t.spec.Endpoint.Mode != spec.EndpointVIP {
		return "", "", nil
	}
	return vipLink(t.spec), t.spec.ControlPlane.VIP, nil
}

// Routes reads the node's routes (network.RouteStatus). A node without a
// public address is asked through a control plane's apid, as talosctl -e
// CONTROL_PLANE -n NODE does.
func (t *talosSource) Routes(ctx context.Context, node string) ([]doctor.Route, error) {
	c, ctx, err := t.viaControlPlane(ctx, node)
	if err != nil {
		return nil, err
	}
	rs, err := c.Routes(ctx)
	out := make([]doctor.Route, 0, len(rs))
	for _, r := range rs {
		out = append(out, doctor.Route{Family: r.Family, Destination: r.Destination, Gateway: r.Gateway, Link: r.Link})
	}
	return out, err
}

// viaControlPlane is the node's own client when it has a public address,
// else a control plane's with the calls proxied to the node.
func (t *talosSource) viaControlPlane(ctx context.Context, node string) (*talosapi.Client, context.Context, error) {
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
func (t *talosSource) TalosVersion(ctx context.Context, node string) (string, error) {
	c, err := t.client(ctx, node)
	if err != nil {
		return "", err
	}
	return c.Version(ctx)
}

func (t *talosSource) EtcdMembers(ctx context.Context, node string) ([]doctor.EtcdMember, error) {
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
