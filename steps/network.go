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

// findNetwork looks the network up by stored ID, then by labels; nil when
// there is none.
func findNetwork(ctx context.Context, c *hcloud.Client, st *state.Store, name string) (*hcloud.Network, error) {
	n, _, err := network.New(&c.Network, &c.Action).Find(ctx, query(st, keyNetwork, networkLabels(name, st.ClusterID())))
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
		got, found, err := svc.Find(ctx, query(env.State, keyNetwork, w.Labels))
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
	n, err := s.ensure(ctx, network.New(&c.Network, &c.Action), env, emit, networkWant(sp, id))
	if err != nil {
		return err
	}
	return s.record(env, n)
}

// ensure finds the network, else creates it, checkpoints it, then adds
// the missing subnets and sets the labels in place; another IP range
// needs a new network and is reported.
func (s *Network) ensure(ctx context.Context, svc *network.Service, env *engine.Env, emit engine.Emit, w network.Want) (*hcloud.Network, error) {
	e, err := findOrCreate(ctx, env, s.Name(), keyNetwork, svc, query(env.State, keyNetwork, w.Labels), noActions(svc.Create, w))
	if err != nil {
		return nil, err
	}
	n := e.got
	if !e.found {
		emitCreated(emit, e.res, n.ID, fmt.Sprintf("%s with %d subnets", w.IPRange, len(w.Subnets)))
		return n, nil
	}
	d := svc.Plan(n, w)
	if err := reconcileChanges(emit, e.res, n.ID, networkChanges(n, w, d), func() error { return svc.Reconcile(ctx, n, w, d) }); err != nil {
		return nil, err
	}
	return n, nil
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
