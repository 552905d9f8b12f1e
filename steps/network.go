package steps

import (
	"context"
	"fmt"
	"net"
	"strings"

	"github.com/hetznercloud/hcloud-go/v2/hcloud"

	"github.com/ohmytalos/ohmytalos/internal/cloud"
	"github.com/ohmytalos/ohmytalos/internal/engine"
	"github.com/ohmytalos/ohmytalos/internal/spec"
	"github.com/ohmytalos/ohmytalos/internal/state"
)

// Network creates the private network and one subnet per pool.
type Network struct{ d *Deps }

// Name implements engine.Step.
func (s *Network) Name() engine.StepName { return engine.StepNetwork }

// Title implements engine.Step.
func (s *Network) Title() string { return "Network: private network and subnets" }

const keyNetwork = "network"

func networkLabels(name, id string) map[string]string {
	return cloud.WithClusterID(cloud.ClusterLabels(name, "network", nil), id)
}

// subnets lists the subnets the spec needs, control plane first.
func subnets(s *spec.Spec) []string {
	out := []string{s.ControlPlane.Subnet}
	for _, p := range s.Pools {
		out = append(out, p.Subnet)
	}
	return out
}

// networkLookup finds the cluster network (by stored ID, then labels).
func networkLookup(c *hcloud.Client) resourceOps[*hcloud.Network] {
	return resourceOps[*hcloud.Network]{
		kind: "network",
		get: func(ctx context.Context, id int64) (*hcloud.Network, error) {
			n, _, err := c.Network.GetByID(ctx, id)
			return n, err
		},
		list: func(ctx context.Context, sel string) ([]*hcloud.Network, error) {
			return c.Network.AllWithOpts(ctx, hcloud.NetworkListOpts{ListOpts: hcloud.ListOpts{LabelSelector: sel}})
		},
		id:     func(n *hcloud.Network) int64 { return n.ID },
		name:   func(n *hcloud.Network) string { return n.Name },
		isNil:  func(n *hcloud.Network) bool { return n == nil },
		labels: func(n *hcloud.Network) map[string]string { return n.Labels },
	}
}

// findNetwork looks the network up by stored ID, then by labels; nil when
// there is none.
func findNetwork(ctx context.Context, c *hcloud.Client, st *state.Store, name string) (*hcloud.Network, error) {
	n, _, err := find(ctx, st, keyNetwork, networkLabels(name, st.ClusterID()), networkLookup(c))
	return n, err
}

// Network change fields.
const (
	fieldIPRange = "ip range"
	fieldSubnets = "subnets"
)

// networkOps reconciles the network: labels and missing subnets in place;
// another IP range needs a new network.
func networkOps(c *hcloud.Client, sp *spec.Spec, id string) resourceOps[*hcloud.Network] {
	ops := networkLookup(c)
	labels := networkLabels(sp.Name, id)
	want := subnets(sp)
	ops.create = func(ctx context.Context) (*hcloud.Network, []*hcloud.Action, error) {
		_, rng, err := net.ParseCIDR(sp.Network.CIDR)
		if err != nil {
			return nil, nil, fmt.Errorf("network.cidr: %w", err)
		}
		opts := hcloud.NetworkCreateOpts{Name: sp.Name, IPRange: rng, Labels: labels}
		for _, sn := range want {
			sub, err := cloudSubnet(sp, sn)
			if err != nil {
				return nil, nil, err
			}
			opts.Subnets = append(opts.Subnets, sub)
		}
		n, _, err := c.Network.Create(ctx, opts)
		if err != nil {
			return nil, nil, fmt.Errorf("create network %s: %w", sp.Name, err)
		}
		return n, nil, nil
	}
	ops.detail = func(*hcloud.Network) string { return fmt.Sprintf("%s with %d subnets", sp.Network.CIDR, len(want)) }
	ops.diff = func(n *hcloud.Network) []engine.Change {
		var out []engine.Change
		if have := ipString(n.IPRange); have != sp.Network.CIDR {
			out = append(out, engine.Change{Field: fieldIPRange, Old: have, New: sp.Network.CIDR, Replace: true})
		}
		var have, missing []string
		for _, sn := range n.Subnets {
			have = append(have, ipString(sn.IPRange))
		}
		for _, sn := range want {
			if !hasSubnet(n, sn) {
				missing = append(missing, sn)
			}
		}
		if len(missing) > 0 {
			out = append(out, engine.Change{Field: fieldSubnets, Old: strings.Join(have, ", "), New: strings.Join(append(have, missing...), ", ")})
		}
		return append(out, labelsChange(n.Labels, labels)...)
	}
	ops.update = func(ctx context.Context, n *hcloud.Network, changes []engine.Change) (*hcloud.Network, error) {
		if has(changes, fieldLabels) {
			if _, _, err := c.Network.Update(ctx, n, hcloud.NetworkUpdateOpts{Labels: mergedLabels(n.Labels, labels)}); err != nil {
				return n, fmt.Errorf("set the labels of network %s: %w", n.Name, err)
			}
		}
		for _, sn := range want {
			if hasSubnet(n, sn) {
				continue
			}
			sub, err := cloudSubnet(sp, sn)
			if err != nil {
				return n, err
			}
			a, _, err := c.Network.AddSubnet(ctx, n, hcloud.NetworkAddSubnetOpts{Subnet: sub})
			if err != nil {
				return n, fmt.Errorf("add subnet %s to network %s: %w", sn, n.Name, err)
			}
			if err := c.Action.WaitFor(ctx, a); err != nil {
				return n, fmt.Errorf("add subnet %s: %w", sn, err)
			}
			n.Subnets = append(n.Subnets, sub)
		}
		return n, nil
	}
	return ops
}

func cloudSubnet(sp *spec.Spec, cidr string) (hcloud.NetworkSubnet, error) {
	_, r, err := net.ParseCIDR(cidr)
	if err != nil {
		return hcloud.NetworkSubnet{}, fmt.Errorf("subnet %s: %w", cidr, err)
	}
	return hcloud.NetworkSubnet{Type: hcloud.NetworkSubnetTypeCloud, IPRange: r, NetworkZone: hcloud.NetworkZone(sp.Network.Zone)}, nil
}

func ipString(n *net.IPNet) string {
	if n == nil {
		return ""
	}
	return n.String()
}

func hasSubnet(n *hcloud.Network, cidr string) bool {
	for _, sn := range n.Subnets {
		if sn.IPRange != nil && sn.IPRange.String() == cidr {
			return true
		}
	}
	return false
}

// Plan implements engine.Step. Subnets are items of their own: apply
// adds the missing ones to the network in place.
func (s *Network) Plan(ctx context.Context, env *engine.Env) (engine.Plan, error) {
	p := engine.Plan{}
	sp := env.Spec
	item := engine.PlanItem{Action: stateAction(env, keyNetwork), Kind: "network", Name: sp.Name,
		Detail: fmt.Sprintf("%s in %s", sp.Network.CIDR, sp.Network.Zone)}
	var n *hcloud.Network
	if c := s.d.planClient(ctx, env, &p); c != nil {
		ops := networkOps(c, sp, env.State.ClusterID())
		got, found, err := find(ctx, env.State, keyNetwork, networkLabels(sp.Name, env.State.ClusterID()), ops)
		if err != nil {
			return p, err
		}
		if found {
			n = got
			for _, ch := range ops.diff(got) {
				if ch.Field != fieldSubnets {
					item.Changes = append(item.Changes, ch)
				}
			}
		}
		item.Action = planAction(found, item.Changes)
	}
	p.Items = append(p.Items, item)
	recorded := map[string]bool{} // without Hetzner: the subnets last recorded
	if r, ok := env.State.Resource(keyNetwork); ok {
		for _, c := range r.Attrs {
			recorded[c] = true
		}
	}
	for _, sn := range subnets(sp) {
		a := engine.ActionCreate
		if (n != nil && hasSubnet(n, sn)) || (n == nil && item.Action != engine.ActionCreate && recorded[sn]) {
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
	id, err := applyClusterID(env)
	if err != nil {
		return err
	}
	n, _, err := ensure(ctx, env, emit, s.Name(), keyNetwork, networkLabels(sp.Name, id), networkOps(c, sp, id))
	if err != nil {
		return err
	}
	return s.record(env, n)
}

// record checkpoints the network and the subnets it has.
func (s *Network) record(env *engine.Env, n *hcloud.Network) error {
	attrs := map[string]string{}
	for i, sn := range n.Subnets {
		if sn.IPRange != nil {
			attrs[fmt.Sprintf("subnet%d", i)] = sn.IPRange.String()
		}
	}
	return env.State.PutResource(keyNetwork, state.Resource{Kind: "network", ID: n.ID, Name: n.Name, Step: string(s.Name()), Attrs: attrs})
}
