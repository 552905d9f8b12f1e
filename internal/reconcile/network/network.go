// Package network reconciles the cluster's Hetzner private network with
// what the spec wants: its IP range (which needs a new network), its
// subnets (missing ones are added in place) and its labels. It works over
// Client, the few hcloud-go calls it makes, after
// cluster-api-provider-hetzner's pkg/services/hcloud/network/network.go.
package network

import (
	"context"
	"fmt"
	"net"

	"github.com/hetznercloud/hcloud-go/v2/hcloud"

	"github.com/ohmytalos/ohmytalos/internal/reconcile"
)

// Client is the part of hcloud.INetworkClient the service uses.
type Client interface {
	reconcile.Lookup[*hcloud.Network, hcloud.NetworkListOpts]
	Create(ctx context.Context, opts hcloud.NetworkCreateOpts) (*hcloud.Network, *hcloud.Response, error)
	Update(ctx context.Context, n *hcloud.Network, opts hcloud.NetworkUpdateOpts) (*hcloud.Network, *hcloud.Response, error)
	AddSubnet(ctx context.Context, n *hcloud.Network, opts hcloud.NetworkAddSubnetOpts) (*hcloud.Action, *hcloud.Response, error)
}

// Want is the network the spec needs.
type Want struct {
	Name    string
	Labels  map[string]string
	IPRange string   // CIDR, such as 10.0.0.0/16
	Zone    string   // network zone of the subnets, such as eu-central
	Subnets []string // CIDRs of the cloud subnets, in order
}

// Service reconciles a network; its Finder gives Find, Get and List.
type Service reconcile.Base[*hcloud.Network, hcloud.NetworkListOpts, Client]

// New returns a service over client; actions is used by Reconcile only.
func New(client Client, actions reconcile.ActionWaiter) *Service {
	return (*Service)(reconcile.NewBase("network", client, func(o hcloud.ListOpts) hcloud.NetworkListOpts { return hcloud.NetworkListOpts{ListOpts: o} }, meta, actions, nil))
}

func meta(n *hcloud.Network) reconcile.Meta {
	return reconcile.Meta{ID: n.ID, Name: n.Name, Labels: n.Labels}
}

// Create creates the network w describes with all its subnets.
func (s *Service) Create(ctx context.Context, w Want) (*hcloud.Network, error) {
	_, rng, err := net.ParseCIDR(w.IPRange)
	if err != nil {
		return nil, fmt.Errorf("network.cidr: %w", err)
	}
	opts := hcloud.NetworkCreateOpts{Name: w.Name, IPRange: rng, Labels: w.Labels}
	for _, sn := range w.Subnets {
		sub, err := w.subnet(sn)
		if err != nil {
			return nil, err
		}
		opts.Subnets = append(opts.Subnets, sub)
	}
	n, _, err := s.Client.Create(ctx, opts)
	if err != nil {
		return nil, fmt.Errorf("create network %s: %w", w.Name, err)
	}
	return n, nil
}

func (w Want) subnet(cidr string) (hcloud.NetworkSubnet, error) {
	_, r, err := net.ParseCIDR(cidr)
	if err != nil {
		return hcloud.NetworkSubnet{}, fmt.Errorf("subnet %s: %w", cidr, err)
	}
	return hcloud.NetworkSubnet{Type: hcloud.NetworkSubnetTypeCloud, IPRange: r, NetworkZone: hcloud.NetworkZone(w.Zone)}, nil
}

// Diff is how a live network differs from Want.
type Diff struct {
	IPRange string   // the wanted range when it differs: needs a new network
	Subnets []string // the wanted subnets the network lacks, in Want order
	Labels  reconcile.LabelDiff
}

// InPlace reports whether d has changes Hetzner makes in place.
func (d Diff) InPlace() bool { return len(d.Subnets) > 0 || !d.Labels.Empty() }

// Plan compares a live network with w.
func (s *Service) Plan(n *hcloud.Network, w Want) Diff {
	var d Diff
	if IPString(n.IPRange) != w.IPRange {
		d.IPRange = w.IPRange
	}
	for _, sn := range w.Subnets {
		if !HasSubnet(n, sn) {
			d.Subnets = append(d.Subnets, sn)
		}
	}
	d.Labels = reconcile.DiffLabels(n.Labels, w.Labels)
	return d
}

// Reconcile makes d's in-place changes: the labels, then each missing
// subnet (its action waited for). An IPRange in d is left for the caller
// to report.
func (s *Service) Reconcile(ctx context.Context, n *hcloud.Network, w Want, d Diff) error {
	if !d.Labels.Empty() {
		if _, _, err := s.Client.Update(ctx, n, hcloud.NetworkUpdateOpts{Labels: reconcile.MergeLabels(n.Labels, w.Labels)}); err != nil {
			return fmt.Errorf("set the labels of network %s: %w", n.Name, err)
		}
	}
	for _, sn := range d.Subnets {
		sub, err := w.subnet(sn)
		if err != nil {
			return err
		}
		a, _, err := s.Client.AddSubnet(ctx, n, hcloud.NetworkAddSubnetOpts{Subnet: sub})
		if err != nil {
			return fmt.Errorf("add subnet %s to network %s: %w", sn, n.Name, err)
		}
		if err := s.Actions.WaitFor(ctx, a); err != nil {
			return fmt.Errorf("add subnet %s: %w", sn, err)
		}
		n.Subnets = append(n.Subnets, sub)
	}
	return nil
}

// IPString renders a range, "" for none.
func IPString(n *net.IPNet) string {
	if n == nil {
		return ""
	}
	return n.String()
}

// HasSubnet reports whether the network has a subnet with range cidr.
func HasSubnet(n *hcloud.Network, cidr string) bool {
	for _, sn := range n.Subnets {
		if sn.IPRange != nil && sn.IPRange.String() == cidr {
			return true
		}
	}
	return false
}
