package steps

import (
	"context"
	"fmt"
	"sort"

	"github.com/hetznercloud/hcloud-go/v2/hcloud"

	"github.com/ohmytalos/ohmytalos/internal/cloud"
	"github.com/ohmytalos/ohmytalos/internal/engine"
	"github.com/ohmytalos/ohmytalos/internal/state"
)

// Doomed is one resource destroy would delete.
type Doomed struct {
	Kind, Name string
	ID         int64
	Why        string // "labelled for the cluster", "created by the cloud controller in the cluster network", ...
}

// DestroyPlan lists what destroy deletes, in deletion order.
type DestroyPlan struct {
	LoadBalancers []*hcloud.LoadBalancer
	Servers       []*hcloud.Server
	Volumes       []*hcloud.Volume
	Firewalls     []*hcloud.Firewall
	Groups        []*hcloud.PlacementGroup
	Networks      []*hcloud.Network
	Snapshots     []*hcloud.Image
	Items         []Doomed
}

// PlanDestroy finds everything labelled for the cluster, plus load balancers
// the cloud controller created for the cluster's Services (they sit in the
// cluster network and would block its deletion). Snapshots are shared
// between clusters and only listed with images.
func PlanDestroy(ctx context.Context, d *Deps, env *engine.Env, images bool) (*DestroyPlan, error) {
	c, err := d.HCloud(ctx, env.Spec)
	if err != nil {
		return nil, err
	}
	sel := cloud.ClusterSelector(env.Spec.Name)
	list := hcloud.ListOpts{LabelSelector: sel}
	p := &DestroyPlan{}
	if p.Networks, err = c.Network.AllWithOpts(ctx, hcloud.NetworkListOpts{ListOpts: list}); err != nil {
		return nil, fmt.Errorf("list networks: %w", err)
	}
	nets := map[int64]bool{}
	for _, n := range p.Networks {
		nets[n.ID] = true
	}
	lbs, err := c.LoadBalancer.All(ctx)
	if err != nil {
		return nil, fmt.Errorf("list load balancers: %w", err)
	}
	for _, lb := range lbs {
		switch {
		case lb.Labels[cloud.LabelCluster] == env.Spec.Name && lb.Labels[cloud.LabelManagedBy] == cloud.ManagedBy:
			p.add(&p.LoadBalancers, lb, "load-balancer", lb.Name, lb.ID, "labelled for the cluster")
		case inNetworks(lb, nets):
			p.add(&p.LoadBalancers, lb, "load-balancer", lb.Name, lb.ID, "in the cluster network (made by the cloud controller for a Service)")
		}
	}
	if p.Servers, err = c.Server.AllWithOpts(ctx, hcloud.ServerListOpts{ListOpts: list}); err != nil {
		return nil, fmt.Errorf("list servers: %w", err)
	}
	if p.Volumes, err = c.Volume.AllWithOpts(ctx, hcloud.VolumeListOpts{ListOpts: list}); err != nil {
		return nil, fmt.Errorf("list volumes: %w", err)
	}
	// The CSI driver's volumes (PersistentVolumeClaims) carry the cluster
	// label too (addons.CSIVolumeLabels) and its own managed-by: they bill
	// per GB until deleted, so they go with the cluster.
	csiSel := cloud.Selector(map[string]string{cloud.LabelCluster: env.Spec.Name, "managed-by": "csi-driver"})
	csiVols, err := c.Volume.AllWithOpts(ctx, hcloud.VolumeListOpts{ListOpts: hcloud.ListOpts{LabelSelector: csiSel}})
	if err != nil {
		return nil, fmt.Errorf("list the CSI driver's volumes: %w", err)
	}
	ours := len(p.Volumes)
	p.Volumes = append(p.Volumes, csiVols...)
	if p.Firewalls, err = c.Firewall.AllWithOpts(ctx, hcloud.FirewallListOpts{ListOpts: list}); err != nil {
		return nil, fmt.Errorf("list firewalls: %w", err)
	}
	if p.Groups, err = c.PlacementGroup.AllWithOpts(ctx, hcloud.PlacementGroupListOpts{ListOpts: list}); err != nil {
		return nil, fmt.Errorf("list placement groups: %w", err)
	}
	if images {
		var data imagesData
		if _, err := env.State.GetData(dataImages, &data); err != nil {
			return nil, err
		}
		for _, id := range data.Snapshots {
			img, _, err := c.Image.GetByID(ctx, id)
			if err != nil {
				return nil, fmt.Errorf("get snapshot %d: %w", id, err)
			}
			if img != nil {
				p.Snapshots = append(p.Snapshots, img)
			}
		}
	}
	for _, s := range p.Servers {
		p.Items = append(p.Items, Doomed{"server", s.Name, s.ID, "labelled for the cluster"})
	}
	for i, v := range p.Volumes {
		why := "labelled for the cluster"
		if i >= ours {
			why = fmt.Sprintf("made by the CSI driver for claim %s/%s (its data is lost)", v.Labels["pvc-namespace"], v.Labels["pvc-name"])
		}
		p.Items = append(p.Items, Doomed{"volume", v.Name, v.ID, why})
	}
	for _, f := range p.Firewalls {
		p.Items = append(p.Items, Doomed{"firewall", f.Name, f.ID, "labelled for the cluster"})
	}
	for _, g := range p.Groups {
		p.Items = append(p.Items, Doomed{"placement-group", g.Name, g.ID, "labelled for the cluster"})
	}
	for _, n := range p.Networks {
		p.Items = append(p.Items, Doomed{"network", n.Name, n.ID, "labelled for the cluster"})
	}
	for _, i := range p.Snapshots {
		p.Items = append(p.Items, Doomed{"snapshot", i.Description, i.ID, "built for this cluster (--images)"})
	}
	return p, nil
}

func (p *DestroyPlan) add(list *[]*hcloud.LoadBalancer, lb *hcloud.LoadBalancer, kind, name string, id int64, why string) {
	*list = append(*list, lb)
	p.Items = append(p.Items, Doomed{kind, name, id, why})
}

func inNetworks(lb *hcloud.LoadBalancer, nets map[int64]bool) bool {
	for _, pn := range lb.PrivateNet {
		if pn.Network != nil && nets[pn.Network.ID] {
			return true
		}
	}
	return false
}

// Destroy deletes what the plan lists in dependency order (load balancers
// and servers before the network; servers before firewalls, volumes and
// placement groups). NotFound counts as deleted, so it can be re-run.
func Destroy(ctx context.Context, d *Deps, env *engine.Env, p *DestroyPlan, emit engine.Emit) error {
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
	for _, lb := range p.LoadBalancers {
		_, err := c.LoadBalancer.Delete(ctx, lb)
		if err := gone("load-balancer", lb.Name, lb.ID, err); err != nil {
			return err
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
	err = env.State.Update(func(st *state.State) error {
		keys := make([]string, 0, len(st.Resources))
		for k := range st.Resources {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			if k == keyNetwork || st.Resources[k].Step != string(engine.StepImages) {
				delete(st.Resources, k)
			}
		}
		for name := range st.Steps {
			if step := engine.StepName(name); step != engine.StepSecrets && (step != engine.StepImages || len(p.Snapshots) > 0) {
				delete(st.Steps, name)
			}
		}
		if len(p.Snapshots) > 0 {
			delete(st.Data, dataImages)
		}
		return nil
	})
	if err != nil {
		return err
	}
	// The client configs name servers that are gone: they are kept as
	// timestamped backups, never deleted. The bundle and the disk
	// passphrase stay: a re-apply makes the same cluster anew.
	for _, name := range []string{secretKubeconfig, secretTalosconfig} {
		if err := env.State.RetireSecret(name); err != nil {
			return err
		}
	}
	return nil
}
