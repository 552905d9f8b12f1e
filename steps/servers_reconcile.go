package steps

import (
	"context"
	"fmt"

	"github.com/hetznercloud/hcloud-go/v2/hcloud"

	"github.com/ohmytalos/ohmytalos/internal/cloud"
	"github.com/ohmytalos/ohmytalos/internal/engine"
	"github.com/ohmytalos/ohmytalos/internal/reconcile"
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

// serverFinder finds the nodes' servers from one list of the cluster's
// servers, so that finding every node costs one request instead of one
// per node (a retried create's adoption asks Hetzner: Refind).
type serverFinder = reconcile.Finder[*hcloud.Server, hcloud.ServerListOpts]

// serverService reconciles servers through c, retrying while one is
// locked.
func (s *Servers) serverService(c *hcloud.Client) *server.Service {
	return server.New(&c.Server, &c.Action, s.d.whileLocked)
}

// listServers lists the cluster's servers once, for svc's lookups.
func listServers(ctx context.Context, svc *server.Service, cluster string) (serverFinder, error) {
	all, err := svc.List(ctx, cloud.ClusterSelector(cluster))
	if err != nil {
		return serverFinder{}, fmt.Errorf("list servers: %w", err)
	}
	return svc.Listed(all), nil
}

// serverSelector finds a node's server by the labels that name it; the
// others (role, pool, ingress) are compared and updated.
func serverSelector(sp *spec.Spec, n spec.Node) map[string]string {
	return map[string]string{cloud.LabelCluster: sp.Name, cloud.LabelManagedBy: cloud.ManagedBy, cloud.LabelNode: n.Name}
}

// ensureServer reconciles a node's server: found through servers, else
// made by create, checkpointed, then its labels set in place (the ingress
// label follows the pool's loadBalancer setting, so the load balancer
// targets follow); another server type, location or placement group is
// reported, as Hetzner changes them only on a powered-off server; a
// detached or stopped server is listed, and attached and started by the
// phases that follow. It returns a create's pending actions.
func (s *Servers) ensureServer(ctx context.Context, svc *server.Service, servers serverFinder, env *engine.Env, emit engine.Emit, n spec.Node, netw *hcloud.Network,
	create func(context.Context) (*hcloud.Server, []*hcloud.Action, error)) (*hcloud.Server, []*hcloud.Action, error) {
	e, err := findOrCreate(ctx, env, s.Name(), serverKey(n.Name), servers, query(env.State, serverKey(n.Name), serverSelector(env.Spec, n)), create)
	if err != nil {
		return nil, e.acts, err
	}
	sv := e.got
	if !e.found {
		emitCreated(emit, e.res, sv.ID, fmt.Sprintf("%s in %s", n.ServerType, n.Location))
		return sv, e.acts, nil
	}
	w := s.serverWant(env, n, netw)
	d := svc.Plan(sv, w)
	if err := reconcileChanges(emit, e.res, sv.ID, serverChanges(sv, w, n, d), func() (err error) {
		sv, err = svc.Reconcile(ctx, sv, w, d)
		return err
	}); err != nil {
		return nil, nil, err
	}
	return sv, nil, nil
}

// planServer is item with what apply would do to node n's server.
func (s *Servers) planServer(ctx context.Context, svc *server.Service, servers serverFinder, env *engine.Env, n spec.Node, netw *hcloud.Network, item engine.PlanItem) (engine.PlanItem, error) {
	sv, found, err := servers.Find(ctx, query(env.State, serverKey(n.Name), serverSelector(env.Spec, n)))
	if err != nil || !found {
		return planned(item, found, nil), err
	}
	w := s.serverWant(env, n, netw)
	return planned(item, true, serverChanges(sv, w, n, svc.Plan(sv, w))), nil
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

// ensureVolume reconciles a node's volume: found, else created (its
// action returned for the caller to wait for), checkpointed, then its
// labels and a larger size set in place; a smaller size or another
// location needs a new volume and is reported.
func (s *Servers) ensureVolume(ctx context.Context, svc *volume.Service, env *engine.Env, emit engine.Emit, key string, w volume.Want) (*hcloud.Volume, *hcloud.Action, error) {
	e, err := findOrCreate(ctx, env, s.Name(), key, svc, query(env.State, key, w.Labels), func(ctx context.Context) (*hcloud.Volume, []*hcloud.Action, error) {
		r, err := svc.Create(ctx, w)
		return r.Volume, []*hcloud.Action{r.Action}, err
	})
	if err != nil {
		return nil, e.action(), err
	}
	v := e.got
	if !e.found {
		emitCreated(emit, e.res, v.ID, "")
		return v, e.action(), nil
	}
	d := svc.Plan(v, w)
	if err := reconcileChanges(emit, e.res, v.ID, volumeChanges(v, d), func() error { return svc.Reconcile(ctx, v, w, d) }); err != nil {
		return nil, nil, err
	}
	return v, nil, nil
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
