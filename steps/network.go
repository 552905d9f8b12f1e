package steps

import (
	"context"
	"fmt"
	"strings"

	"github.com/hetznercloud/hcloud-go/v2/hcloud"

	"github.com/ohmytalos/ohmytalos/internal/cloud"
	"github.com/ohmytalos/ohmytalos/internal/engine"
	"github.com/ohmytalos/ohmytalos/internal/reconcile/network"
	"github.com/ohmytalos/ohmytalos/internal/spec"
	"github.com/ohmytalos/ohmytalos/internal/state"
)

// Network creates the private network and one subnet per pool.
type Network struct{ d *Deps }

// Name implements engine.Step.
func (s *Network) Name() engine.StepName { return StepNetwork }

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
func networkLookup(svc *network.Service) resourceOps[*hcloud.Network] {
	return resourceOps[*hcloud.Network]{
		kind:   "network",
		get:    svc.Get,
		list:   svc.List,
		id:     func(n *hcloud.Network) int64 { return n.ID },
		name:   func(n *hcloud.Network) string { return n.Name },
		isNil:  func(n *hcloud.Network) bool { return n == nil },
		labels: func(n *hcloud.Network) map[string]string { return n.Labels },
	}
}

// findNetwork looks the network up by stored ID, then by labels; nil when
// there is none.
func findNetwork(ctx context.Context, c *hcloud.Client, st *state.Store, name string) (*hcloud.Network, error) {
	n, _, err := find(ctx, st, keyNetwork, networkLabels(name, st.ClusterID()), networkLookup(network.New(&c.Network, &c.Action)))
	return n, err
}

// Network change fields.
const (
	fieldIPRange = "ip range"
	fieldSubnets = "subnets"
)

// networkWant is the network the spec needs.
func networkWant(sp *spec.Spec, id string) network.Want {
	return network.Want{Name: sp.Name, Labels: networkLabels(sp.Name, id), IPRange: sp.Network.CIDR, Zone: sp.Network.Zone, Subnets: subnets(sp)}
}

// networkOps hands the network service to ensure: labels and missing
// subnets in place; another IP range needs a new network.
func networkOps(svc *network.Service, w network.Want) resourceOps[*hcloud.Network] {
	ops := networkLookup(svc)
	ops.create = func(ctx context.Context) (*hcloud.Network, []*hcloud.Action, error) {
		n, err := svc.Create(ctx, w)
		return n, nil, err
	}
	ops.detail = func(*hcloud.Network) string { return fmt.Sprintf("%s with %d subnets", w.IPRange, len(w.Subnets)) }
	ops.diff = func(n *hcloud.Network) []engine.Change { return networkChanges(n, w, svc.Plan(n, w)) }
	ops.update = func(ctx context.Context, n *hcloud.Network, _ []engine.Change) (*hcloud.Network, error) {
		return n, svc.Reconcile(ctx, n, w, svc.Plan(n, w))
	}
	return ops
}

// networkChanges shows a network diff for plan and events.
func networkChanges(n *hcloud.Network, w network.Want, d network.Diff) []engine.Change {
	var out []engine.Change
	if d.IPRange != "" {
		out = append(out, engine.Change{Field: fieldIPRange, Old: network.IPString(n.IPRange), New: d.IPRange, Replace: true})
	}
	if len(d.Subnets) > 0 {
		var have []string
		for _, sn := range n.Subnets {
			have = append(have, network.IPString(sn.IPRange))
		}
		out = append(out, engine.Change{Field: fieldSubnets, Old: strings.Join(have, ", "), New: strings.Join(append(have, d.Subnets...), ", ")})
	}
	if !d.Labels.Empty() {
		out = append(out, labelsDisplay(d.Labels))
	}
	return out
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
		svc, w := network.New(&c.Network, &c.Action), networkWant(sp, env.State.ClusterID())
		got, found, err := find(ctx, env.State, keyNetwork, w.Labels, networkLookup(svc))
		if err != nil {
			return p, err
		}
		if found {
			n = got
			d := svc.Plan(got, w)
			d.Subnets = nil // subnets are items of their own
			item.Changes = networkChanges(got, w, d)
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
		if (n != nil && network.HasSubnet(n, sn)) || (n == nil && item.Action != engine.ActionCreate && recorded[sn]) {
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
	w := networkWant(sp, id)
	n, _, err := ensure(ctx, env, emit, s.Name(), keyNetwork, w.Labels, networkOps(network.New(&c.Network, &c.Action), w))
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
