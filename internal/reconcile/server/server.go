// Package server compares a node's Hetzner server with what the spec
// wants and makes the changes Hetzner allows in place: its labels, and
// its placement group while it is powered off. Another server type or
// location is reported, not made; a missing network or a stopped server
// is left to the attach and power-on phases. It works over Client, the
// few hcloud-go calls it makes, after cluster-api-provider-hetzner's
// pkg/services/hcloud/server/server.go. Finding and creating servers
// stay with the servers step, which lists every server once.
package server

import (
	"context"
	"fmt"

	"github.com/hetznercloud/hcloud-go/v2/hcloud"

	"github.com/ohmytalos/ohmytalos/internal/reconcile"
)

// Client is the part of hcloud.IServerClient the service uses.
type Client interface {
	reconcile.Lookup[*hcloud.Server, hcloud.ServerListOpts]
	Update(ctx context.Context, sv *hcloud.Server, opts hcloud.ServerUpdateOpts) (*hcloud.Server, *hcloud.Response, error)
	AddToPlacementGroup(ctx context.Context, sv *hcloud.Server, pg *hcloud.PlacementGroup) (*hcloud.Action, *hcloud.Response, error)
	RemoveFromPlacementGroup(ctx context.Context, sv *hcloud.Server) (*hcloud.Action, *hcloud.Response, error)
}

// Want is the server of one node.
type Want struct {
	ServerType string
	Location   string
	// PlacementGroup is the node's group; nil when it is not known yet.
	PlacementGroup *hcloud.PlacementGroup
	Network        *hcloud.Network // nil when there is no network yet
	Labels         map[string]string
	Owned          []string // labels ohmytalos removes when Labels lacks them
}

// Service reconciles servers; its Finder gives Find, Get and List.
type Service reconcile.Base[*hcloud.Server, hcloud.ServerListOpts, Client]

// New returns a service over client; actions and retry are used by
// Reconcile only, retry nil calls once.
func New(client Client, actions reconcile.ActionWaiter, retry reconcile.Retry) *Service {
	return (*Service)(reconcile.NewBase("server", client, func(o hcloud.ListOpts) hcloud.ServerListOpts { return hcloud.ServerListOpts{ListOpts: o} }, meta, actions, retry))
}

func meta(sv *hcloud.Server) reconcile.Meta {
	return reconcile.Meta{ID: sv.ID, Name: sv.Name, Labels: sv.Labels}
}

// Diff is how a live server differs from Want.
type Diff struct {
	ServerType string // the wanted type when it differs: not made
	Location   string // the wanted location when it differs: not made
	// PlacementGroup is the group to move the server into; nil when it is
	// in it. MoveInPlace says whether Hetzner can move it now (only a
	// powered-off server moves between groups).
	PlacementGroup *hcloud.PlacementGroup
	MoveInPlace    bool
	Detached       bool // not in Want.Network: the attach phase attaches it
	Stopped        bool // neither running nor starting: the power-on phase starts it
	Labels         reconcile.LabelDiff
}

// Plan compares a live server with w.
func (s *Service) Plan(sv *hcloud.Server, w Want) Diff {
	var d Diff
	if sv.ServerType != nil && sv.ServerType.Name != w.ServerType {
		d.ServerType = w.ServerType
	}
	if sv.Location != nil && sv.Location.Name != w.Location {
		d.Location = w.Location
	}
	if pg := w.PlacementGroup; pg != nil && (sv.PlacementGroup == nil || sv.PlacementGroup.ID != pg.ID) {
		d.PlacementGroup, d.MoveInPlace = pg, sv.Status == hcloud.ServerStatusOff
	}
	d.Detached = w.Network != nil && !AttachedTo(sv, w.Network)
	d.Stopped = sv.Status != hcloud.ServerStatusRunning && sv.Status != hcloud.ServerStatusStarting
	d.Labels = reconcile.DiffLabels(sv.Labels, w.Labels, w.Owned...)
	return d
}

// Reconcile makes d's in-place changes: the move into the placement
// group (when the server is off), then the labels; it returns the server
// as it now is.
func (s *Service) Reconcile(ctx context.Context, sv *hcloud.Server, w Want, d Diff) (*hcloud.Server, error) {
	if d.PlacementGroup != nil && d.MoveInPlace {
		if err := s.move(ctx, sv, d.PlacementGroup); err != nil {
			return sv, err
		}
	}
	if d.Labels.Empty() {
		return sv, nil
	}
	got, _, err := s.Client.Update(ctx, sv, hcloud.ServerUpdateOpts{Labels: reconcile.MergeLabels(sv.Labels, w.Labels, w.Owned...)})
	if err != nil {
		return sv, fmt.Errorf("set the labels of server %s: %w", sv.Name, err)
	}
	return got, nil
}

// move puts a powered-off server into pg, out of its group first.
func (s *Service) move(ctx context.Context, sv *hcloud.Server, pg *hcloud.PlacementGroup) error {
	if sv.PlacementGroup != nil {
		if err := s.do(ctx, sv, "remove from its placement group", func() (*hcloud.Action, *hcloud.Response, error) {
			return s.Client.RemoveFromPlacementGroup(ctx, sv)
		}); err != nil {
			return err
		}
	}
	return s.do(ctx, sv, "add to its placement group", func() (*hcloud.Action, *hcloud.Response, error) {
		return s.Client.AddToPlacementGroup(ctx, sv, &hcloud.PlacementGroup{ID: pg.ID})
	})
}

func (s *Service) do(ctx context.Context, sv *hcloud.Server, what string, call func() (*hcloud.Action, *hcloud.Response, error)) error {
	err := reconcile.Act(ctx, s.Retry, s.Actions, func() (*hcloud.Action, error) {
		a, _, err := call()
		return a, err
	})
	if err != nil {
		return fmt.Errorf("%s server %s: %w", what, sv.Name, err)
	}
	return nil
}

// AttachedTo reports whether the server is in the network.
func AttachedTo(sv *hcloud.Server, netw *hcloud.Network) bool {
	for _, pn := range sv.PrivateNet {
		if pn.Network != nil && pn.Network.ID == netw.ID {
			return true
		}
	}
	return false
}
