package hcloudfake

import (
	"fmt"
	"maps"
	"net/http"
	"slices"
	"time"

	"github.com/hetznercloud/hcloud-go/v2/hcloud/schema"
)

func (f *Fake) servePlacementGroups(rq *request) (int, any, error) {
	switch {
	case len(rq.segs) == 1 && rq.method == http.MethodGet:
		typ := rq.query.Get("type")
		items := make([]schema.PlacementGroup, 0, len(f.pgroups))
		for _, pg := range f.pgroups {
			if typ == "" || pg.Type == typ {
				items = append(items, f.renderPlacementGroup(pg))
			}
		}
		out, err := listResponse(rq.query, "placement_groups", items, accessor[schema.PlacementGroup]{
			id:     func(x schema.PlacementGroup) int64 { return x.ID },
			name:   func(x schema.PlacementGroup) string { return x.Name },
			labels: func(x schema.PlacementGroup) map[string]string { return x.Labels },
		})
		return http.StatusOK, out, err
	case len(rq.segs) == 1 && rq.method == http.MethodPost:
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
		if f.pgByName(req.Name) != nil {
			return 0, nil, errUniqueness("name")
		}
		if req.Labels != nil {
			if err := checkLabels(*req.Labels); err != nil {
				return 0, nil, err
			}
		}
		pg := &schema.PlacementGroup{ID: f.nextID(), Name: req.Name, Labels: labelsOrEmpty(req.Labels),
			Created: rq.now.UTC().Truncate(time.Second), Type: req.Type}
		f.pgroups[pg.ID] = pg
		return http.StatusCreated, map[string]any{"placement_group": f.renderPlacementGroup(pg), "action": nil}, nil
	case len(rq.segs) != 2:
		return 0, nil, errNoRoute(rq)
	}
	id, err := rq.idAt(1)
	if err != nil {
		return 0, nil, err
	}
	pg, ok := f.pgroups[id]
	if !ok {
		return 0, nil, errNotFound("placement group", id)
	}
	switch rq.method {
	case http.MethodGet:
		return http.StatusOK, map[string]any{"placement_group": f.renderPlacementGroup(pg)}, nil
	case http.MethodPut:
		var req schema.PlacementGroupUpdateRequest
		if err := rq.decode(&req); err != nil {
			return 0, nil, err
		}
		if req.Name != nil && *req.Name != pg.Name {
			if f.pgByName(*req.Name) != nil {
				return 0, nil, errUniqueness("name")
			}
			pg.Name = *req.Name
		}
		if req.Labels != nil {
			if err := checkLabels(*req.Labels); err != nil {
				return 0, nil, err
			}
			pg.Labels = maps.Clone(*req.Labels)
		}
		return http.StatusOK, map[string]any{"placement_group": f.renderPlacementGroup(pg)}, nil
	case http.MethodDelete:
		for _, ss := range f.servers {
			if ss.pgroup == id {
				ss.pgroup = 0
			}
		}
		delete(f.pgroups, id)
		return http.StatusNoContent, nil, nil
	}
	return 0, nil, errMethod(rq)
}

func (f *Fake) pgByName(name string) *schema.PlacementGroup {
	for _, pg := range f.pgroups {
		if pg.Name == name {
			return pg
		}
	}
	return nil
}

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
