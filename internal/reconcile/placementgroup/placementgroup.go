// Package placementgroup reconciles a spread placement group of the
// cluster with what the spec wants: its labels in place; another type
// needs a new group. It works over Client, the few hcloud-go calls it
// makes, in the shape of cluster-api-provider-hetzner's
// pkg/services/hcloud/placementgroup service.
package placementgroup

import (
	"context"
	"fmt"

	"github.com/hetznercloud/hcloud-go/v2/hcloud"

	"github.com/ohmytalos/ohmytalos/internal/reconcile"
)

// Client is the part of hcloud.IPlacementGroupClient the service uses.
type Client interface {
	reconcile.Lookup[*hcloud.PlacementGroup, hcloud.PlacementGroupListOpts]
	Create(ctx context.Context, opts hcloud.PlacementGroupCreateOpts) (hcloud.PlacementGroupCreateResult, *hcloud.Response, error)
	Update(ctx context.Context, pg *hcloud.PlacementGroup, opts hcloud.PlacementGroupUpdateOpts) (*hcloud.PlacementGroup, *hcloud.Response, error)
}

// Want is a spread placement group the spec needs.
type Want struct {
	Name   string
	Labels map[string]string
}

// Service reconciles placement groups; its Finder gives Find, Get and List.
type Service reconcile.Base[*hcloud.PlacementGroup, hcloud.PlacementGroupListOpts, Client]

// New returns a service over client.
func New(client Client) *Service {
	return (*Service)(reconcile.NewBase("placement-group", client, func(o hcloud.ListOpts) hcloud.PlacementGroupListOpts {
		return hcloud.PlacementGroupListOpts{ListOpts: o}
	}, meta, nil, nil))
}

func meta(pg *hcloud.PlacementGroup) reconcile.Meta {
	return reconcile.Meta{ID: pg.ID, Name: pg.Name, Labels: pg.Labels}
}

// Create creates the spread placement group w describes.
func (s *Service) Create(ctx context.Context, w Want) (*hcloud.PlacementGroup, error) {
	r, _, err := s.Client.Create(ctx, hcloud.PlacementGroupCreateOpts{Name: w.Name, Labels: w.Labels, Type: hcloud.PlacementGroupTypeSpread})
	if err != nil {
		return nil, fmt.Errorf("create placement group %s: %w", w.Name, err)
	}
	return r.PlacementGroup, nil
}

// Diff is how a live placement group differs from Want.
type Diff struct {
	// Type is the wanted type (spread) when the group has another: Hetzner
	// cannot change it, a new group is needed.
	Type   hcloud.PlacementGroupType
	Labels reconcile.LabelDiff
}

// InPlace reports whether d has changes Hetzner makes in place.
func (d Diff) InPlace() bool { return !d.Labels.Empty() }

// Plan compares a live placement group with w.
func (s *Service) Plan(pg *hcloud.PlacementGroup, w Want) Diff {
	var d Diff
	if pg.Type != hcloud.PlacementGroupTypeSpread {
		d.Type = hcloud.PlacementGroupTypeSpread
	}
	d.Labels = reconcile.DiffLabels(pg.Labels, w.Labels)
	return d
}

// Reconcile makes d's in-place changes (the labels) and returns the
// group as it now is. A Type in d is left for the caller to report.
func (s *Service) Reconcile(ctx context.Context, pg *hcloud.PlacementGroup, w Want, d Diff) (*hcloud.PlacementGroup, error) {
	if !d.InPlace() {
		return pg, nil
	}
	got, _, err := s.Client.Update(ctx, pg, hcloud.PlacementGroupUpdateOpts{Labels: reconcile.MergeLabels(pg.Labels, w.Labels)})
	if err != nil {
		return pg, fmt.Errorf("set the labels of placement group %s: %w", pg.Name, err)
	}
	return got, nil
}
