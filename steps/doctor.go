package steps

import (
	"context"

	"github.com/ohmytalos/ohmytalos/internal/addons"
	"github.com/ohmytalos/ohmytalos/internal/cloud"
	"github.com/ohmytalos/ohmytalos/internal/doctor"
	"github.com/ohmytalos/ohmytalos/internal/doctor/hcloudsource"
	"github.com/ohmytalos/ohmytalos/internal/doctor/kubesource"
	"github.com/ohmytalos/ohmytalos/internal/doctor/talossource"
	"github.com/ohmytalos/ohmytalos/internal/engine"
	"github.com/ohmytalos/ohmytalos/internal/spec"
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
	if sp.Addons.Ingress.On() {
		de.HandedOver = map[string]string{addons.IngressLBName(sp): addons.IngressServiceRef()}
	}
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
		de.IngressIPv6 = doctorIngressIPv6(ctx, c, sp, de.Domains)
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
		addr := map[string]string{}
		for _, r := range append(append([]doctor.NodeRef{}, de.ControlPlanes...), de.Workers...) {
			if r.PublicIP != "" {
				addr[r.PrivateIP], addr[r.Name], addr[r.PublicIP] = r.PublicIP, r.PublicIP, r.PublicIP
			}
		}
		var controlPlanes []string
		for _, cp := range de.ControlPlanes {
			controlPlanes = append(controlPlanes, cp.PrivateIP)
		}
		// The VIP as ohmytalos renders it into every control plane's config
		// (configs are regenerated from the spec, never edited).
		var vip talossource.VIP
		if sp.Endpoint.Mode == spec.EndpointVIP {
			vip = talossource.VIP{Link: vipLink(sp), Address: sp.ControlPlane.VIP}
		}
		ts := talossource.New(tc, addr, controlPlanes, vip)
		de.Talos = ts
		closeAll = ts.Close
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
