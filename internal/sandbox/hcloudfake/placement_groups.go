package hcloudfake

import (
	"fmt"
	"maps"
	"net/http"
	"slices"

	"github.com/hetznercloud/hcloud-go/v2/hcloud/schema"
)

// placementGroupServers lists the servers in a placement group, by ID.
func (f *Fake) placementGroupServers(id int64) []int64 {
	out := []int64{}
	for _, sid := range slices.Sorted(maps.Keys(f.servers)) {
		if f.servers[sid].pgroup == id {
			out = append(out, sid)
		}
	}
	return out
}

func (f *Fake) renderPlacementGroup(pg *schema.PlacementGroup) schema.PlacementGroup {
	out := *pg
	out.Labels = maps.Clone(pg.Labels)
	out.Servers = f.placementGroupServers(pg.ID)
	return out
}

// pgKind is the collection behind /placement_groups, filtered by ?type=.
func (f *Fake) pgKind() *collection[*schema.PlacementGroup, schema.PlacementGroup] {
	c := &collection[*schema.PlacementGroup, schema.PlacementGroup]{plural: "placement_groups", single: "placement_group",
		noun: "placement group", items: f.pgroups, render: f.renderPlacementGroup,
		fields: func(x *schema.PlacementGroup) (int64, *string, *map[string]string) { return x.ID, &x.Name, &x.Labels },
		keep:   equalTo("type", func(pg *schema.PlacementGroup) string { return pg.Type }),
		remove: func(_ *request, id int64, _ *schema.PlacementGroup) (*action, error) {
			for _, ss := range f.servers {
				if ss.pgroup == id {
					ss.pgroup = 0
				}
			}
			return nil, nil
		},
	}
	c.create = func(rq *request) (int, any, error) {
		var req schema.PlacementGroupCreateRequest
		if err := rq.decode(&req); err != nil {
			return 0, nil, err
		}
		if req.Name == "" {
			return 0, nil, errInvalid("name", "name is required")
		}
		if req.Type != "spread" {
			return 0, nil, errInvalid("type", fmt.Sprintf("placement group type %q is invalid; the only type is spread", req.Type))
		}
		if c.taken(req.Name) {
			return 0, nil, errUniqueness("name")
		}
		if err := f.checkLimit("placement_groups", 1); err != nil {
			return 0, nil, err
		}
		if err := checkNewLabels(req.Labels); err != nil {
			return 0, nil, err
		}
		pg := &schema.PlacementGroup{ID: f.nextID(), Name: req.Name, Labels: labelsOrEmpty(req.Labels),
			Created: rq.created(), Type: req.Type}
		f.pgroups[pg.ID] = pg
		return http.StatusCreated, map[string]any{"placement_group": f.renderPlacementGroup(pg), "action": nil}, nil
	}
	c.update = patchBy(c, func(r *schema.PlacementGroupUpdateRequest) (*string, *map[string]string) { return r.Name, r.Labels })
	return c
}
