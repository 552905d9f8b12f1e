package steps

import (
	"context"
	"fmt"

	"github.com/hetznercloud/hcloud-go/v2/hcloud"

	"github.com/ohmytalos/ohmytalos/internal/cloud"
	"github.com/ohmytalos/ohmytalos/internal/engine"
	"github.com/ohmytalos/ohmytalos/internal/reconcile/volume"
	"github.com/ohmytalos/ohmytalos/internal/spec"
)

// Server change fields. Network and status are made by the attach and
// power-on phases that follow for every server.
const (
	fieldServerType     = "server type"
	fieldPlacementGroup = "placement group"
	fieldStatus         = "status"
)

// serverIndex is the cluster's servers from one list request, so that
// finding every node costs one request instead of one per node.
type serverIndex struct {
	byID   map[int64]*hcloud.Server
	byNode map[string][]*hcloud.Server
}

func listServers(ctx context.Context, c *hcloud.Client, cluster string) (*serverIndex, error) {
	all, err := c.Server.AllWithOpts(ctx, hcloud.ServerListOpts{ListOpts: hcloud.ListOpts{LabelSelector: cloud.ClusterSelector(cluster)}})
	if err != nil {
		return nil, fmt.Errorf("list servers: %w", err)
	}
	idx := &serverIndex{byID: map[int64]*hcloud.Server{}, byNode: map[string][]*hcloud.Server{}}
	for _, sv := range all {
		idx.byID[sv.ID] = sv
		idx.byNode[sv.Labels[cloud.LabelNode]] = append(idx.byNode[sv.Labels[cloud.LabelNode]], sv)
	}
	return idx, nil
}

// serverSelector finds a node's server by the labels that name it; the
// others (role, pool, ingress) are compared and updated.
func serverSelector(sp *spec.Spec, n spec.Node) map[string]string {
	return map[string]string{cloud.LabelCluster: sp.Name, cloud.LabelManagedBy: cloud.ManagedBy, cloud.LabelNode: n.Name}
}

// serverOps reconciles a node's server: labels in place (the ingress label
// follows the pool's loadBalancer setting, so the load balancer targets
// follow); another server type, location or placement group is reported,
// as Hetzner changes them only on a powered-off server; a detached or
// stopped server is listed, and attached and started by the phases that
// follow. Lookups are served from idx (a retried create's adoption asks
// Hetzner); netw may be nil (no network yet) and create nil when only
// planning.
func (s *Servers) serverOps(c *hcloud.Client, env *engine.Env, n spec.Node, idx *serverIndex, netw *hcloud.Network,
	create func(context.Context) (*hcloud.Server, []*hcloud.Action, error)) resourceOps[*hcloud.Server] {
	sp := env.Spec
	want := serverLabels(sp, env.State.ClusterID(), n)
	return resourceOps[*hcloud.Server]{
		kind: "server",
		get: func(ctx context.Context, id int64) (*hcloud.Server, error) {
			if sv, ok := idx.byID[id]; ok {
				return sv, nil
			}
			sv, _, err := c.Server.GetByID(ctx, id)
			return sv, err
		},
		list: func(context.Context, string) ([]*hcloud.Server, error) { return idx.byNode[n.Name], nil },
		relist: func(ctx context.Context, sel string) ([]*hcloud.Server, error) {
			return c.Server.AllWithOpts(ctx, hcloud.ServerListOpts{ListOpts: hcloud.ListOpts{LabelSelector: sel}})
		},
		create: create,
		id:     func(sv *hcloud.Server) int64 { return sv.ID },
		name:   func(sv *hcloud.Server) string { return sv.Name },
		isNil:  func(sv *hcloud.Server) bool { return sv == nil },
		labels: func(sv *hcloud.Server) map[string]string { return sv.Labels },
		detail: func(*hcloud.Server) string { return fmt.Sprintf("%s in %s", n.ServerType, n.Location) },
		diff: func(sv *hcloud.Server) []engine.Change {
			var out []engine.Change
			if sv.ServerType != nil && sv.ServerType.Name != n.ServerType {
				out = append(out, engine.Change{Field: fieldServerType, Old: sv.ServerType.Name, New: n.ServerType, Replace: true})
			}
			if sv.Location != nil && sv.Location.Name != n.Location {
				out = append(out, engine.Change{Field: fieldLocation, Old: sv.Location.Name, New: n.Location, Replace: true})
			}
			pgKey, pgName, _ := placementGroup(sp.Name, n.Pool, n.Index)
			if pg, ok := env.State.Resource(pgKey); ok && (sv.PlacementGroup == nil || sv.PlacementGroup.ID != pg.ID) {
				old := ""
				if sv.PlacementGroup != nil {
					old = sv.PlacementGroup.Name
				}
				// Hetzner moves only a powered-off server between groups
				// (add_to_placement_group, remove_from_placement_group).
				out = append(out, engine.Change{Field: fieldPlacementGroup, Old: old, New: pgName, Replace: sv.Status != hcloud.ServerStatusOff})
			}
			if netw != nil && !attachedTo(sv, netw) {
				out = append(out, engine.Change{Field: fieldNetwork, New: netw.Name + " at " + n.PrivateIP})
			}
			if sv.Status != hcloud.ServerStatusRunning && sv.Status != hcloud.ServerStatusStarting {
				out = append(out, engine.Change{Field: fieldStatus, Old: string(sv.Status), New: string(hcloud.ServerStatusRunning)})
			}
			return append(out, labelsChange(sv.Labels, want, cloud.LabelIngress)...)
		},
		update: func(ctx context.Context, sv *hcloud.Server, changes []engine.Change) (*hcloud.Server, error) {
			if has(changes, fieldPlacementGroup) {
				pgKey, _, _ := placementGroup(sp.Name, n.Pool, n.Index)
				pg, _ := env.State.Resource(pgKey)
				if err := s.movePlacementGroup(ctx, c, sv, pg.ID); err != nil {
					return sv, err
				}
			}
			if !has(changes, fieldLabels) {
				return sv, nil
			}
			got, _, err := c.Server.Update(ctx, sv, hcloud.ServerUpdateOpts{Labels: mergedLabels(sv.Labels, want, cloud.LabelIngress)})
			if err != nil {
				return sv, fmt.Errorf("set the labels of server %s: %w", sv.Name, err)
			}
			return got, nil
		},
	}
}

// volumeOps hands the volume service to ensure: labels, and a larger
// size in place; a smaller size or another location needs a new volume.
func volumeOps(svc *volume.Service, w volume.Want) resourceOps[*hcloud.Volume] {
	return resourceOps[*hcloud.Volume]{
		kind: "volume",
		get:  svc.Get,
		list: svc.List,
		create: func(ctx context.Context) (*hcloud.Volume, []*hcloud.Action, error) {
			r, err := svc.Create(ctx, w)
			return r.Volume, []*hcloud.Action{r.Action}, err
		},
		id:     func(v *hcloud.Volume) int64 { return v.ID },
		name:   func(v *hcloud.Volume) string { return v.Name },
		isNil:  func(v *hcloud.Volume) bool { return v == nil },
		labels: func(v *hcloud.Volume) map[string]string { return v.Labels },
		diff:   func(v *hcloud.Volume) []engine.Change { return volumeChanges(v, svc.Plan(v, w)) },
		update: func(ctx context.Context, v *hcloud.Volume, _ []engine.Change) (*hcloud.Volume, error) {
			return v, svc.Reconcile(ctx, v, w, svc.Plan(v, w))
		},
	}
}

// volumeChanges shows a volume diff for plan and events.
func volumeChanges(v *hcloud.Volume, d volume.Diff) []engine.Change {
	var out []engine.Change
	if size := max(d.Grow, d.Shrink); size > 0 {
		out = append(out, engine.Change{Field: "size", Old: fmt.Sprintf("%d GB", v.Size), New: fmt.Sprintf("%d GB", size), Replace: d.Shrink > 0})
	}
	if d.Location != "" {
		out = append(out, engine.Change{Field: fieldLocation, Old: v.Location.Name, New: d.Location, Replace: true})
	}
	if !d.Labels.Empty() {
		out = append(out, labelsDisplay(d.Labels))
	}
	return out
}

// movePlacementGroup puts a powered-off server into the placement group.
func (s *Servers) movePlacementGroup(ctx context.Context, c *hcloud.Client, sv *hcloud.Server, pgID int64) error {
	step := func(what string, call func() (*hcloud.Action, *hcloud.Response, error)) error {
		var a *hcloud.Action
		err := s.d.whileLocked(ctx, func() (err error) {
			a, _, err = call()
			return err
		})
		if err == nil {
			err = c.Action.WaitFor(ctx, a)
		}
		if err != nil {
			return fmt.Errorf("%s server %s: %w", what, sv.Name, err)
		}
		return nil
	}
	if sv.PlacementGroup != nil {
		if err := step("remove from its placement group", func() (*hcloud.Action, *hcloud.Response, error) {
			return c.Server.RemoveFromPlacementGroup(ctx, sv)
		}); err != nil {
			return err
		}
	}
	return step("add to its placement group", func() (*hcloud.Action, *hcloud.Response, error) {
		return c.Server.AddToPlacementGroup(ctx, sv, &hcloud.PlacementGroup{ID: pgID})
	})
}
