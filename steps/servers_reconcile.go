package steps

import (
	"context"
	"fmt"

	"github.com/hetznercloud/hcloud-go/v2/hcloud"

	"github.com/ohmytalos/ohmytalos/internal/cloud"
	"github.com/ohmytalos/ohmytalos/internal/engine"
	"github.com/ohmytalos/ohmytalos/internal/reconcile/server"
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
	svc := server.New(&c.Server, &c.Action, s.d.whileLocked)
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
			w := s.serverWant(env, n, netw)
			return serverChanges(sv, w, n, svc.Plan(sv, w))
		},
		update: func(ctx context.Context, sv *hcloud.Server, _ []engine.Change) (*hcloud.Server, error) {
			w := s.serverWant(env, n, netw)
			return svc.Reconcile(ctx, sv, w, svc.Plan(sv, w))
		},
	}
}

// serverWant is the server the spec wants for node n, in its placement
// group as the state records it.
func (s *Servers) serverWant(env *engine.Env, n spec.Node, netw *hcloud.Network) server.Want {
	w := server.Want{ServerType: n.ServerType, Location: n.Location, Network: netw,
		Labels: serverLabels(env.Spec, env.State.ClusterID(), n), Owned: []string{cloud.LabelIngress}}
	pgKey, pgName, _ := placementGroup(env.Spec.Name, n.Pool, n.Index)
	if pg, ok := env.State.Resource(pgKey); ok {
		w.PlacementGroup = &hcloud.PlacementGroup{ID: pg.ID, Name: pgName}
	}
	return w
}

// serverChanges shows a server diff for plan and events.
func serverChanges(sv *hcloud.Server, w server.Want, n spec.Node, d server.Diff) []engine.Change {
	var out []engine.Change
	if d.ServerType != "" {
		out = append(out, engine.Change{Field: fieldServerType, Old: sv.ServerType.Name, New: d.ServerType, Replace: true})
	}
	if d.Location != "" {
		out = append(out, engine.Change{Field: fieldLocation, Old: sv.Location.Name, New: d.Location, Replace: true})
	}
	if d.PlacementGroup != nil {
		old := ""
		if sv.PlacementGroup != nil {
			old = sv.PlacementGroup.Name
		}
		// Hetzner moves only a powered-off server between groups
		// (add_to_placement_group, remove_from_placement_group).
		out = append(out, engine.Change{Field: fieldPlacementGroup, Old: old, New: d.PlacementGroup.Name, Replace: !d.MoveInPlace})
	}
	if d.Detached {
		out = append(out, engine.Change{Field: fieldNetwork, New: w.Network.Name + " at " + n.PrivateIP})
	}
	if d.Stopped {
		out = append(out, engine.Change{Field: fieldStatus, Old: string(sv.Status), New: string(hcloud.ServerStatusRunning)})
	}
	if !d.Labels.Empty() {
		out = append(out, labelsDisplay(d.Labels))
	}
	return out
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
