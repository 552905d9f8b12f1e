package steps

import (
	"context"
	"fmt"

	"github.com/hetznercloud/hcloud-go/v2/hcloud"

	"github.com/ohmytalos/ohmytalos/internal/cloud"
	"github.com/ohmytalos/ohmytalos/internal/engine"
	"github.com/ohmytalos/ohmytalos/internal/spec"
)

// Server change fields.
const (
	fieldServerType     = "server type"
	fieldPlacementGroup = "placement group"
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
func serverSelector(sp *spec.Spec, n spec.Node) string {
	return cloud.Selector(map[string]string{cloud.LabelCluster: sp.Name, cloud.LabelManagedBy: cloud.ManagedBy, cloud.LabelNode: n.Name})
}

// serverOps reconciles a node's server: labels in place (the ingress label
// follows the pool's loadBalancer setting, so the load balancer targets
// follow); another server type, location or placement group is reported,
// as Hetzner changes them only on a powered-off server. Lookups are served
// from idx first; create may be nil when only planning.
func (s *Servers) serverOps(c *hcloud.Client, env *engine.Env, n spec.Node, idx *serverIndex, create func(context.Context) (*hcloud.Server, error)) resourceOps[*hcloud.Server] {
	sp := env.Spec
	want := serverLabels(sp, n)
	listed := false
	return resourceOps[*hcloud.Server]{
		kind: "server",
		get: func(ctx context.Context, id int64) (*hcloud.Server, error) {
			if sv, ok := idx.byID[id]; ok {
				return sv, nil
			}
			sv, _, err := c.Server.GetByID(ctx, id)
			return sv, err
		},
		list: func(ctx context.Context, sel string) ([]*hcloud.Server, error) {
			if !listed {
				listed = true
				return idx.byNode[n.Name], nil
			}
			return c.Server.AllWithOpts(ctx, hcloud.ServerListOpts{ListOpts: hcloud.ListOpts{LabelSelector: sel}})
		},
		create: create,
		id:     func(sv *hcloud.Server) int64 { return sv.ID },
		name:   func(sv *hcloud.Server) string { return sv.Name },
		isNil:  func(sv *hcloud.Server) bool { return sv == nil },
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
				out = append(out, engine.Change{Field: fieldPlacementGroup, Old: old, New: pgName, Replace: true})
			}
			return append(out, labelsChange(sv.Labels, want, cloud.LabelIngress)...)
		},
		update: func(ctx context.Context, sv *hcloud.Server, _ []engine.Change) (*hcloud.Server, error) {
			got, _, err := c.Server.Update(ctx, sv, hcloud.ServerUpdateOpts{Labels: mergedLabels(sv.Labels, want, cloud.LabelIngress)})
			if err != nil {
				return sv, fmt.Errorf("set the labels of server %s: %w", sv.Name, err)
			}
			return got, nil
		},
	}
}
