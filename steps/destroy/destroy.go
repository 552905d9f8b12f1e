// Package destroy deletes what a cluster owns on Hetzner: it lists the
// resources labelled with the cluster's name, sorts them into the
// cluster's own (in its state or carrying its cluster ID) and the others,
// and deletes its own in dependency order. cmd's destroy verb drives it.
package destroy

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"sort"

	"github.com/hetznercloud/hcloud-go/v2/hcloud"

	"github.com/ohmytalos/ohmytalos/internal/cloud"
	"github.com/ohmytalos/ohmytalos/internal/engine"
	"github.com/ohmytalos/ohmytalos/internal/state"
	"github.com/ohmytalos/ohmytalos/steps"
)

// Doomed is one resource destroy would delete.
type Doomed struct {
	Kind, Name string
	ID         int64
	Why        string // "labelled for the cluster", "created by the cloud controller in the cluster network", ...
	// Unowned marks a resource with the cluster's name but neither in its
	// state nor carrying its ID: another checkout or cluster may own it.
	Unowned bool
}

// Options say what destroy takes beyond the cluster's own resources.
type Options struct {
	// Images also deletes the snapshots this cluster built (never those
	// it reused).
	Images bool
	// IncludeUnowned also deletes resources labelled with the cluster's
	// name that are neither in its state nor carry its ID.
	IncludeUnowned bool
}

// Plan lists what destroy deletes, in deletion order.
type Plan struct {
	LoadBalancers []*hcloud.LoadBalancer
	Servers       []*hcloud.Server
	Volumes       []*hcloud.Volume
	Firewalls     []*hcloud.Firewall
	Groups        []*hcloud.PlacementGroup
	Networks      []*hcloud.Network
	Snapshots     []*hcloud.Image
	Items         []Doomed
	// Unowned are resources with the cluster's name that are not this
	// cluster's; they are in the lists above only with IncludeUnowned.
	Unowned []Doomed
	// Kept are snapshots the state lists that this cluster did not build
	// (reused): destroy --images keeps them.
	Kept []Doomed
}

// NewPlan finds what is the cluster's: resources labelled with its name
// that its state lists or that carry its ID, load balancers the cloud
// controller created in its network, and the CSI driver's volumes that
// carry its ID or are attached to its servers. The rest of what carries
// the name is listed as Unowned and deleted only with IncludeUnowned.
// Snapshots are shared between clusters: with Images, only those this
// cluster built go.
func NewPlan(ctx context.Context, d *steps.Deps, env *engine.Env, opts Options) (*Plan, error) {
	if err := steps.RequireStateOrBundle(env, "destroy"); err != nil {
		return nil, err
	}
	c, err := d.HCloud(ctx, env.Spec)
	if err != nil {
		return nil, err
	}
	sel := cloud.ClusterSelector(env.Spec.Name)
	list := hcloud.ListOpts{LabelSelector: sel}
	p := &Plan{}
	dc := destroyClassifier{st: env.State, opts: opts, p: p}
	nets, err := c.Network.AllWithOpts(ctx, hcloud.NetworkListOpts{ListOpts: list})
	if err != nil {
		return nil, fmt.Errorf("list networks: %w", err)
	}
	p.Networks = keep(&dc, "network", nets, func(n *hcloud.Network) (string, int64, map[string]string) { return n.Name, n.ID, n.Labels })
	ownNets := map[int64]bool{}
	for _, n := range p.Networks {
		ownNets[n.ID] = true
	}
	if err := planLoadBalancers(ctx, c, &dc, env.Spec.Name, ownNets); err != nil {
		return nil, err
	}
	servers, err := c.Server.AllWithOpts(ctx, hcloud.ServerListOpts{ListOpts: list})
	if err != nil {
		return nil, fmt.Errorf("list servers: %w", err)
	}
	p.Servers = keep(&dc, "server", servers, func(s *hcloud.Server) (string, int64, map[string]string) { return s.Name, s.ID, s.Labels })
	ownServers := map[int64]bool{}
	for _, s := range p.Servers {
		ownServers[s.ID] = true
	}
	if err := planVolumes(ctx, c, &dc, env.Spec.Name, list, ownServers); err != nil {
		return nil, err
	}
	fws, err := c.Firewall.AllWithOpts(ctx, hcloud.FirewallListOpts{ListOpts: list})
	if err != nil {
		return nil, fmt.Errorf("list firewalls: %w", err)
	}
	p.Firewalls = keep(&dc, "firewall", fws, func(f *hcloud.Firewall) (string, int64, map[string]string) { return f.Name, f.ID, f.Labels })
	groups, err := c.PlacementGroup.AllWithOpts(ctx, hcloud.PlacementGroupListOpts{ListOpts: list})
	if err != nil {
		return nil, fmt.Errorf("list placement groups: %w", err)
	}
	p.Groups = keep(&dc, "placement-group", groups, func(g *hcloud.PlacementGroup) (string, int64, map[string]string) { return g.Name, g.ID, g.Labels })
	if opts.Images {
		if err := planSnapshots(ctx, c, &dc); err != nil {
			return nil, err
		}
	}
	p.order()
	return p, nil
}

// keep is what of all (of one kind, labelled for the cluster) destroy
// deletes, each classified by dc; meta names a resource's name, ID and
// labels.
func keep[T any](dc *destroyClassifier, kind string, all []T, meta func(T) (string, int64, map[string]string)) []T {
	var out []T
	for _, r := range all {
		if name, id, labels := meta(r); dc.take(kind, name, id, labels) {
			out = append(out, r)
		}
	}
	return out
}

// destroyClassifier sorts what carries the cluster's name into the
// cluster's own resources and the others.
type destroyClassifier struct {
	st   *state.Store
	opts Options
	p    *Plan
}

// take classifies one resource labelled with the cluster's name and
// reports whether destroy deletes it.
func (dc *destroyClassifier) take(kind, name string, id int64, labels map[string]string) bool {
	return dc.takeWhy(kind, name, id, labels, "labelled for the cluster")
}

func (dc *destroyClassifier) takeWhy(kind, name string, id int64, labels map[string]string, why string) bool {
	switch {
	case steps.OwnedByID(dc.st, labels):
		dc.p.Items = append(dc.p.Items, Doomed{Kind: kind, Name: name, ID: id, Why: why + ", with its cluster ID"})
		return true
	case steps.InState(dc.st, kind, id):
		dc.p.Items = append(dc.p.Items, Doomed{Kind: kind, Name: name, ID: id, Why: why + ", listed in its state"})
		return true
	}
	return dc.unowned(kind, name, id, "labelled "+cloud.LabelCluster+"="+labels[cloud.LabelCluster]+" but "+steps.ForeignOwner(labels))
}

// unowned records a resource that is not the cluster's; it is deleted only
// with IncludeUnowned.
func (dc *destroyClassifier) unowned(kind, name string, id int64, why string) bool {
	it := Doomed{Kind: kind, Name: name, ID: id, Why: why, Unowned: true}
	dc.p.Unowned = append(dc.p.Unowned, it)
	if dc.opts.IncludeUnowned {
		dc.p.Items = append(dc.p.Items, it)
	}
	return dc.opts.IncludeUnowned
}

// planLoadBalancers takes the load balancers labelled for the cluster and
// those in its own networks (the cloud controller's, for Services: they
// would block the network's deletion).
func planLoadBalancers(ctx context.Context, c *hcloud.Client, dc *destroyClassifier, name string, ownNets map[int64]bool) error {
	lbs, err := c.LoadBalancer.All(ctx)
	if err != nil {
		return fmt.Errorf("list load balancers: %w", err)
	}
	for _, lb := range lbs {
		labelled := lb.Labels[cloud.LabelCluster] == name && lb.Labels[cloud.LabelManagedBy] == cloud.ManagedBy
		switch {
		case labelled:
			if dc.take("load-balancer", lb.Name, lb.ID, lb.Labels) {
				dc.p.LoadBalancers = append(dc.p.LoadBalancers, lb)
			}
		case inNetworks(lb, ownNets):
			dc.p.Items = append(dc.p.Items, Doomed{Kind: "load-balancer", Name: lb.Name, ID: lb.ID,
				Why: "in the cluster network (made by the cloud controller for a Service)"})
			dc.p.LoadBalancers = append(dc.p.LoadBalancers, lb)
		}
	}
	return nil
}

// planVolumes takes the cluster's volumes, and the CSI driver's volumes
// (PersistentVolumeClaims, labelled through HCLOUD_VOLUME_EXTRA_LABELS,
// see addons.CSIVolumeLabels) that carry its ID or are attached to its
// servers: they bill per GB until deleted, so they go with the cluster.
func planVolumes(ctx context.Context, c *hcloud.Client, dc *destroyClassifier, cluster string, list hcloud.ListOpts, ownServers map[int64]bool) error {
	vols, err := c.Volume.AllWithOpts(ctx, hcloud.VolumeListOpts{ListOpts: list})
	if err != nil {
		return fmt.Errorf("list volumes: %w", err)
	}
	dc.p.Volumes = append(dc.p.Volumes, keep(dc, "volume", vols, func(v *hcloud.Volume) (string, int64, map[string]string) { return v.Name, v.ID, v.Labels })...)
	csiSel := cloud.Selector(map[string]string{cloud.LabelCluster: cluster, "managed-by": "csi-driver"})
	csiVols, err := c.Volume.AllWithOpts(ctx, hcloud.VolumeListOpts{ListOpts: hcloud.ListOpts{LabelSelector: csiSel}})
	if err != nil {
		return fmt.Errorf("list the CSI driver's volumes: %w", err)
	}
	for _, v := range csiVols {
		why := fmt.Sprintf("made by the CSI driver for claim %s/%s (its data is lost)", v.Labels["pvc-namespace"], v.Labels["pvc-name"])
		attached := v.Server != nil && ownServers[v.Server.ID]
		switch {
		case steps.OwnedByID(dc.st, v.Labels) || attached:
			dc.p.Items = append(dc.p.Items, Doomed{Kind: "volume", Name: v.Name, ID: v.ID, Why: why})
			dc.p.Volumes = append(dc.p.Volumes, v)
		case dc.unowned("volume", v.Name, v.ID, why+"; "+steps.ForeignOwner(v.Labels)):
			dc.p.Volumes = append(dc.p.Volumes, v)
		}
	}
	return nil
}

// planSnapshots takes the snapshots the state lists that carry the
// cluster's ID (it built them); reused ones are kept.
func planSnapshots(ctx context.Context, c *hcloud.Client, dc *destroyClassifier) error {
	snapshots, err := steps.SnapshotIDs(dc.st)
	if err != nil {
		return err
	}
	for _, k := range slices.Sorted(maps.Keys(snapshots)) {
		id := snapshots[k]
		img, _, err := c.Image.GetByID(ctx, id)
		if err != nil {
			return fmt.Errorf("get snapshot %d: %w", id, err)
		}
		if img == nil {
			continue
		}
		if !steps.OwnedByID(dc.st, img.Labels) {
			dc.p.Kept = append(dc.p.Kept, Doomed{Kind: "snapshot", Name: img.Description, ID: img.ID,
				Why: "reused, not built by this cluster (other clusters may use it): kept"})
			continue
		}
		dc.p.Snapshots = append(dc.p.Snapshots, img)
		dc.p.Items = append(dc.p.Items, Doomed{Kind: "snapshot", Name: img.Description, ID: img.ID, Why: "built by this cluster (--images)"})
	}
	return nil
}

// order sorts Items in deletion order, as Run deletes them.
func (p *Plan) order() {
	rank := map[string]int{"load-balancer": 0, "server": 1, "volume": 2, "firewall": 3, "placement-group": 4, "network": 5, "snapshot": 6}
	sort.SliceStable(p.Items, func(i, j int) bool { return rank[p.Items[i].Kind] < rank[p.Items[j].Kind] })
}

func inNetworks(lb *hcloud.LoadBalancer, nets map[int64]bool) bool {
	for _, pn := range lb.PrivateNet {
		if pn.Network != nil && nets[pn.Network.ID] {
			return true
		}
	}
	return false
}

// Run deletes what the plan lists in dependency order (load balancers
// and servers before the network; servers before firewalls, volumes and
// placement groups). NotFound counts as deleted, so it can be re-run.
func Run(ctx context.Context, d *steps.Deps, env *engine.Env, p *Plan, emit engine.Emit) error {
	c, err := d.HCloud(ctx, env.Spec)
	if err != nil {
		return err
	}
	gone := func(kind, name string, id int64, err error) error {
		if err != nil && !cloud.IsNotFound(err) {
			return fmt.Errorf("delete %s %s (%d): %w", kind, name, id, err)
		}
		emit(engine.Event{Step: "destroy", Kind: engine.KindResource, Action: engine.ActionDelete, Resource: kind + "/" + name, ID: id})
		return nil
	}
	var lbActs []*hcloud.Action
	for _, lb := range p.LoadBalancers {
		r, _, err := c.LoadBalancer.DeleteWithResult(ctx, lb)
		if err := gone("load-balancer", lb.Name, lb.ID, err); err != nil {
			return err
		}
		if r.Action != nil && r.Action.ID != 0 {
			lbActs = append(lbActs, r.Action)
		}
	}
	if len(lbActs) > 0 {
		// The network goes last, and Hetzner refuses it while a load
		// balancer is still attached.
		if err := c.Action.WaitFor(ctx, lbActs...); err != nil {
			return fmt.Errorf("wait for load balancers to be deleted: %w", err)
		}
	}
	var acts []*hcloud.Action
	for _, s := range p.Servers {
		r, _, err := c.Server.DeleteWithResult(ctx, s)
		if err := gone("server", s.Name, s.ID, err); err != nil {
			return err
		}
		if r != nil && r.Action != nil {
			acts = append(acts, r.Action)
		}
	}
	if len(acts) > 0 {
		if err := c.Action.WaitFor(ctx, acts...); err != nil {
			return fmt.Errorf("wait for servers to be deleted: %w", err)
		}
	}
	for _, v := range p.Volumes {
		_, err := c.Volume.Delete(ctx, v)
		if err := gone("volume", v.Name, v.ID, err); err != nil {
			return err
		}
	}
	for _, f := range p.Firewalls {
		// A firewall still applied (even to a label selector) is in use.
		if len(f.AppliedTo) > 0 {
			acts, _, err := c.Firewall.RemoveResources(ctx, f, f.AppliedTo)
			if err != nil && !cloud.IsNotFound(err) && !hcloud.IsError(err, hcloud.ErrorCodeFirewallResourceNotFound) {
				return fmt.Errorf("detach firewall %s: %w", f.Name, err)
			}
			if len(acts) > 0 {
				if err := c.Action.WaitFor(ctx, acts...); err != nil {
					return fmt.Errorf("detach firewall %s: %w", f.Name, err)
				}
			}
		}
		_, err := c.Firewall.Delete(ctx, f)
		if err := gone("firewall", f.Name, f.ID, err); err != nil {
			return err
		}
	}
	for _, g := range p.Groups {
		_, err := c.PlacementGroup.Delete(ctx, g)
		if err := gone("placement-group", g.Name, g.ID, err); err != nil {
			return err
		}
	}
	for _, n := range p.Networks {
		_, err := c.Network.Delete(ctx, n)
		if err := gone("network", n.Name, n.ID, err); err != nil {
			return err
		}
	}
	for _, i := range p.Snapshots {
		_, err := c.Image.Delete(ctx, i)
		if err := gone("snapshot", i.Description, i.ID, err); err != nil {
			return err
		}
	}
	return steps.ForgetDestroyed(env.State, len(p.Snapshots) > 0)
}
