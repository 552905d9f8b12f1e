package steps

import (
	"context"
	"fmt"
	"net"

	"github.com/hetznercloud/hcloud-go/v2/hcloud"

	"github.com/ohmytalos/ohmytalos/internal/cloud"
	"github.com/ohmytalos/ohmytalos/internal/engine"
	"github.com/ohmytalos/ohmytalos/internal/spec"
	"github.com/ohmytalos/ohmytalos/internal/state"
)

// Network creates the private network and one subnet per pool.
type Network struct{ d *Deps }

// Name implements engine.Step.
func (s *Network) Name() string { return "network" }

// Title implements engine.Step.
func (s *Network) Title() string { return "Network: private network and subnets" }

const keyNetwork = "network"

func networkLabels(name string) map[string]string {
	return cloud.ClusterLabels(name, "network", nil)
}

// subnets lists the subnets the spec needs, control plane first.
func subnets(s *spec.Spec) []string {
	out := []string{s.ControlPlane.Subnet}
	for _, p := range s.Pools {
		out = append(out, p.Subnet)
	}
	return out
}

// findNetwork looks the network up by stored ID, then by labels.
func findNetwork(ctx context.Context, c *hcloud.Client, st *state.Store, name string) (*hcloud.Network, error) {
	if r, ok := st.Resource(keyNetwork); ok {
		n, _, err := c.Network.GetByID(ctx, r.ID)
		if err != nil {
			return nil, fmt.Errorf("get network %d: %w", r.ID, err)
		}
		if n != nil {
			return n, nil
		}
	}
	sel := cloud.Selector(networkLabels(name))
	list, err := c.Network.AllWithOpts(ctx, hcloud.NetworkListOpts{ListOpts: hcloud.ListOpts{LabelSelector: sel}})
	if err != nil {
		return nil, fmt.Errorf("list networks: %w", err)
	}
	n, _, err := cloud.One(list, "network", sel, func(n *hcloud.Network) string { return n.Name })
	return n, err
}

func hasSubnet(n *hcloud.Network, cidr string) bool {
	for _, sn := range n.Subnets {
		if sn.IPRange != nil && sn.IPRange.String() == cidr {
			return true
		}
	}
	return false
}

// Plan implements engine.Step.
func (s *Network) Plan(ctx context.Context, env *engine.Env) (engine.Plan, error) {
	p := engine.Plan{}
	sp := env.Spec
	r, have := env.State.Resource(keyNetwork)
	action := engine.ActionCreate
	if have {
		action = engine.ActionReuse
	}
	p.Items = append(p.Items, engine.PlanItem{Action: action, Kind: "network", Name: sp.Name,
		Detail: fmt.Sprintf("%s in %s", sp.Network.CIDR, sp.Network.Zone)})
	done := map[string]bool{}
	for _, c := range r.Attrs {
		done[c] = true
	}
	for _, sn := range subnets(sp) {
		a := engine.ActionCreate
		if done[sn] {
			a = engine.ActionReuse
		}
		p.Items = append(p.Items, engine.PlanItem{Action: a, Kind: "subnet", Name: sn})
	}
	return p, nil
}

// Apply implements engine.Step.
func (s *Network) Apply(ctx context.Context, env *engine.Env, emit engine.Emit) error {
	c, err := s.d.HCloud(ctx, env.Spec)
	if err != nil {
		return err
	}
	sp := env.Spec
	n, err := findNetwork(ctx, c, env.State, sp.Name)
	if err != nil {
		return err
	}
	want := subnets(sp)
	if n == nil {
		_, rng, err := net.ParseCIDR(sp.Network.CIDR)
		if err != nil {
			return fmt.Errorf("network.cidr: %w", err)
		}
		opts := hcloud.NetworkCreateOpts{Name: sp.Name, IPRange: rng, Labels: networkLabels(sp.Name)}
		for _, sn := range want {
			_, r, err := net.ParseCIDR(sn)
			if err != nil {
				return fmt.Errorf("subnet %s: %w", sn, err)
			}
			opts.Subnets = append(opts.Subnets, hcloud.NetworkSubnet{Type: hcloud.NetworkSubnetTypeCloud, IPRange: r, NetworkZone: hcloud.NetworkZone(sp.Network.Zone)})
		}
		n, _, err = c.Network.Create(ctx, opts)
		if err != nil {
			return fmt.Errorf("create network %s: %w", sp.Name, err)
		}
		emit(engine.Event{Kind: engine.KindResource, Action: engine.ActionCreate, Resource: "network/" + sp.Name, ID: n.ID,
			Message: fmt.Sprintf("%s with %d subnets", sp.Network.CIDR, len(want))})
	} else {
		emit(engine.Event{Kind: engine.KindResource, Action: engine.ActionReuse, Resource: "network/" + n.Name, ID: n.ID})
	}
	if err := s.record(env, n); err != nil {
		return err
	}
	for _, sn := range want {
		if hasSubnet(n, sn) {
			continue
		}
		_, r, err := net.ParseCIDR(sn)
		if err != nil {
			return fmt.Errorf("subnet %s: %w", sn, err)
		}
		a, _, err := c.Network.AddSubnet(ctx, n, hcloud.NetworkAddSubnetOpts{Subnet: hcloud.NetworkSubnet{
			Type: hcloud.NetworkSubnetTypeCloud, IPRange: r, NetworkZone: hcloud.NetworkZone(sp.Network.Zone)}})
		if err != nil {
			return fmt.Errorf("add subnet %s to network %s: %w", sn, n.Name, err)
		}
		if err := c.Action.WaitFor(ctx, a); err != nil {
			return fmt.Errorf("add subnet %s: %w", sn, err)
		}
		n.Subnets = append(n.Subnets, hcloud.NetworkSubnet{IPRange: r})
		if err := s.record(env, n); err != nil {
			return err
		}
		emit(engine.Event{Kind: engine.KindResource, Action: engine.ActionCreate, Resource: "subnet/" + sn})
	}
	return nil
}

// record checkpoints the network and the subnets it has.
func (s *Network) record(env *engine.Env, n *hcloud.Network) error {
	attrs := map[string]string{}
	for i, sn := range n.Subnets {
		if sn.IPRange != nil {
			attrs[fmt.Sprintf("subnet%d", i)] = sn.IPRange.String()
		}
	}
	return env.State.PutResource(keyNetwork, state.Resource{Kind: "network", ID: n.ID, Name: n.Name, Step: s.Name(), Attrs: attrs})
}
