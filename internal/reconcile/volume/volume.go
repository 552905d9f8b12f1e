// Package volume reconciles a node's Hetzner data volume with what the
// spec wants: its labels and a larger size in place (Hetzner resizes
// volumes up only); a smaller size or another location needs a new
// volume. It works over Client, the few hcloud-go calls it makes, in the
// shape of cluster-api-provider-hetzner's pkg/services/hcloud services.
package volume

import (
	"context"
	"fmt"

	"github.com/hetznercloud/hcloud-go/v2/hcloud"

	"github.com/ohmytalos/ohmytalos/internal/reconcile"
)

// Client is the part of hcloud.IVolumeClient the service uses.
type Client interface {
	reconcile.Lookup[*hcloud.Volume, hcloud.VolumeListOpts]
	Create(ctx context.Context, opts hcloud.VolumeCreateOpts) (hcloud.VolumeCreateResult, *hcloud.Response, error)
	Update(ctx context.Context, v *hcloud.Volume, opts hcloud.VolumeUpdateOpts) (*hcloud.Volume, *hcloud.Response, error)
	Resize(ctx context.Context, v *hcloud.Volume, size int) (*hcloud.Action, *hcloud.Response, error)
}

// Want is the data volume of one node.
type Want struct {
	Node     string // the node's name: the volume is Node-data
	Size     int    // GB
	Location string
	Labels   map[string]string
}

// Service reconciles volumes; its Finder gives Find, Get and List.
type Service reconcile.Base[*hcloud.Volume, hcloud.VolumeListOpts, Client]

// New returns a service over client; actions is used by Reconcile only.
func New(client Client, actions reconcile.ActionWaiter) *Service {
	return (*Service)(reconcile.NewBase("volume", client, func(o hcloud.ListOpts) hcloud.VolumeListOpts { return hcloud.VolumeListOpts{ListOpts: o} }, meta, actions, nil))
}

func meta(v *hcloud.Volume) reconcile.Meta {
	return reconcile.Meta{ID: v.ID, Name: v.Name, Labels: v.Labels}
}

// Created is a volume just created and the action that makes it ready.
type Created struct {
	Volume *hcloud.Volume
	Action *hcloud.Action
}

// Create creates the volume w describes.
func (s *Service) Create(ctx context.Context, w Want) (Created, error) {
	r, _, err := s.Client.Create(ctx, hcloud.VolumeCreateOpts{Name: w.Node + "-data", Size: w.Size,
		Location: &hcloud.Location{Name: w.Location}, Labels: w.Labels})
	if err != nil {
		return Created{}, fmt.Errorf("create volume for %s: %w", w.Node, err)
	}
	return Created{Volume: r.Volume, Action: r.Action}, nil
}

// Diff is how a live volume differs from Want.
type Diff struct {
	Grow     int    // the larger wanted size, made in place; 0 when not larger
	Shrink   int    // the smaller wanted size: needs a new volume; 0 when not smaller
	Location string // the wanted location when it differs: needs a new volume
	Labels   reconcile.LabelDiff
}

// InPlace reports whether d has changes Hetzner makes in place.
func (d Diff) InPlace() bool { return d.Grow > 0 || !d.Labels.Empty() }

// Plan compares a live volume with w.
func (s *Service) Plan(v *hcloud.Volume, w Want) Diff {
	var d Diff
	switch {
	case v.Size < w.Size:
		d.Grow = w.Size
	case v.Size > w.Size:
		d.Shrink = w.Size
	}
	if v.Location != nil && v.Location.Name != w.Location {
		d.Location = w.Location
	}
	d.Labels = reconcile.DiffLabels(v.Labels, w.Labels)
	return d
}

// Reconcile makes d's in-place changes: the resize (waited for), then
// the labels. Shrink and Location are left for the caller to report.
func (s *Service) Reconcile(ctx context.Context, v *hcloud.Volume, w Want, d Diff) error {
	if d.Grow > 0 {
		a, _, err := s.Client.Resize(ctx, v, d.Grow)
		if err == nil {
			err = s.Actions.WaitFor(ctx, a)
		}
		if err != nil {
			return fmt.Errorf("resize volume %s to %d GB: %w", v.Name, d.Grow, err)
		}
	}
	if !d.Labels.Empty() {
		if _, _, err := s.Client.Update(ctx, v, hcloud.VolumeUpdateOpts{Labels: reconcile.MergeLabels(v.Labels, w.Labels)}); err != nil {
			return fmt.Errorf("set the labels of volume %s: %w", v.Name, err)
		}
	}
	return nil
}
