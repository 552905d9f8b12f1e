package steps

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/hetznercloud/hcloud-go/v2/hcloud"

	"github.com/ohmytalos/ohmytalos/internal/addons"
	"github.com/ohmytalos/ohmytalos/internal/cloud"
	"github.com/ohmytalos/ohmytalos/internal/engine"
	"github.com/ohmytalos/ohmytalos/internal/reconcile/placementgroup"
	"github.com/ohmytalos/ohmytalos/internal/spec"
	"github.com/ohmytalos/ohmytalos/internal/state"
)

// Pools creates what the node pools share: spread placement groups, the
// firewall and the load balancers.
type Pools struct{ d *Deps }

// Name implements engine.Step.
func (s *Pools) Name() engine.StepName { return StepPools }

// Title implements engine.Step.
func (s *Pools) Title() string { return "Pools: placement groups, firewall, load balancers" }

// maxSpread is Hetzner's limit of servers in one spread placement group.
const maxSpread = 10

// placementGroup names the spread group of the i-th (1-based) server of a pool.
func placementGroup(cluster, pool string, i int) (key, name string, labels map[string]string) {
	return placementGroupWithID(cluster, "", pool, i)
}

// placementGroupWithID is placementGroup with the cluster ID label.
func placementGroupWithID(cluster, id, pool string, i int) (key, name string, labels map[string]string) {
	n := (i-1)/maxSpread + 1
	name = fmt.Sprintf("%s-%s-%d", cluster, pool, n)
	return "pg/" + name, name, cloud.WithClusterID(cloud.ClusterLabels(cluster, "placement-group", map[string]string{cloud.LabelPool: pool, "ohmytalos.io/group": fmt.Sprint(n)}), id)
}

// pgSpec is a placement group the spec needs.
type pgSpec struct {
	key, name string
	labels    map[string]string
}

// placementGroups lists every group the spec needs, labelled with id.
func placementGroups(sp *spec.Spec, id string) []pgSpec {
	var out []pgSpec
	seen := map[string]bool{}
	for _, n := range sp.Nodes() {
		key, name, labels := placementGroupWithID(sp.Name, id, n.Pool, n.Index)
		if !seen[key] {
			seen[key] = true
			out = append(out, pgSpec{key, name, labels})
		}
	}
	return out
}

// keyFirewall is the firewall's state key.
const keyFirewall = "firewall"

func ingressLB(sp *spec.Spec, id string) (key, name string, labels map[string]string) {
	return "lb/ingress", addons.IngressLBName(sp), cloud.WithClusterID(cloud.ClusterLabels(sp.Name, "ingress-lb", nil), id)
}

func apiLB(sp *spec.Spec, id string) (key, name string, labels map[string]string) {
	return "lb/api", sp.Name + "-api", cloud.WithClusterID(cloud.ClusterLabels(sp.Name, "api-lb", nil), id)
}

func firewallLabels(sp *spec.Spec, id string) map[string]string {
	return cloud.WithClusterID(cloud.ClusterLabels(sp.Name, "firewall", nil), id)
}

// Plan implements engine.Step.
func (s *Pools) Plan(ctx context.Context, env *engine.Env) (engine.Plan, error) {
	sp := env.Spec
	p := engine.Plan{}
	c := s.d.planClient(ctx, env, &p)
	var netw *hcloud.Network
	var groups []*hcloud.PlacementGroup
	if c != nil {
		var err error
		if netw, err = findNetwork(ctx, c, env.State, sp.Name); err != nil {
			return p, err
		}
		// One list for every group, however many pools (issue 21 item 7).
		if groups, err = c.PlacementGroup.AllWithOpts(ctx, hcloud.PlacementGroupListOpts{ListOpts: hcloud.ListOpts{LabelSelector: cloud.ClusterSelector(sp.Name)}}); err != nil {
			return p, fmt.Errorf("list placement groups: %w", err)
		}
	}
	add := func(item engine.PlanItem, key string, plan func() (engine.PlanItem, error)) error {
		item.Action = stateAction(env, key)
		if c != nil {
			var err error
			if item, err = plan(); err != nil {
				return err
			}
		}
		p.Items = append(p.Items, item)
		return nil
	}
	for _, g := range placementGroups(sp, env.State.ClusterID()) {
		item := engine.PlanItem{Kind: "placement-group", Name: g.name, Detail: "spread"}
		if err := add(item, g.key, func() (engine.PlanItem, error) {
			svc, w := placementgroup.New(&c.PlacementGroup), pgWant(g)
			got, found, err := svc.Listed(groups).Find(ctx, query(env.State, g.key, g.labels))
			if err != nil || !found {
				return planned(item, found, nil), err
			}
			return planned(item, found, placementGroupChanges(got, svc.Plan(got, w))), nil
		}); err != nil {
			return p, err
		}
	}
	if err := s.d.planFirewall(ctx, env, &p, c, add); err != nil {
		return p, err
	}
	var ingress *hcloud.LoadBalancer
	for _, lb := range loadBalancerSpecs(sp, env.State.ClusterID()) {
		item := engine.PlanItem{Kind: "load-balancer", Name: lb.name, Detail: lb.detail}
		if err := add(item, lb.key, func() (engine.PlanItem, error) {
			got, planned, err := s.d.planLoadBalancer(ctx, c, env, netw, lb, item)
			if lb.key == keyIngressLB {
				ingress = got
			}
			return planned, err
		}); err != nil {
			return p, err
		}
	}
	p.Notes = append(p.Notes, ingressNotes(sp, ingress)...)
	return p, nil
}

// Apply implements engine.Step.
func (s *Pools) Apply(ctx context.Context, env *engine.Env, emit engine.Emit) error {
	c, err := s.d.HCloud(ctx, env.Spec)
	if err != nil {
		return err
	}
	sp := env.Spec
	id, err := applyClusterID(env)
	if err != nil {
		return err
	}
	for _, g := range placementGroups(sp, id) {
		if _, err := s.placementGroup(ctx, c, env, emit, g); err != nil {
			return err
		}
	}
	if err := s.firewall(ctx, c, env, emit, id); err != nil {
		return err
	}
	if err := s.loadBalancers(ctx, c, env, emit); err != nil {
		return err
	}
	s.d.rateEvent(emit)
	return nil
}

// loadBalancers ensures the ingress (and, in loadbalancer endpoint mode,
// the API) load balancer. Servers do not depend on them being ready, so
// their create actions are waited for at the end of bootstrap, off the
// critical path; the action IDs are checkpointed for a resumed run.
func (s *Pools) loadBalancers(ctx context.Context, c *hcloud.Client, env *engine.Env, emit engine.Emit) error {
	sp := env.Spec
	net, err := findNetwork(ctx, c, env.State, sp.Name)
	if err != nil {
		return err
	}
	if net == nil {
		return fmt.Errorf("the cluster network does not exist yet: run the network step first (ohmytalos apply --only network)")
	}
	pending := map[string]*hcloud.Action{}
	for _, lb := range loadBalancerSpecs(sp, env.State.ClusterID()) {
		if pending[lb.key], err = s.loadBalancer(ctx, c, env, emit, net, lb); err != nil {
			return err
		}
	}
	for key, a := range pending {
		if a == nil {
			continue
		}
		if err := env.State.Update(func(st *state.State) error {
			r := st.Resources[key]
			if r.Attrs == nil {
				r.Attrs = map[string]string{}
			}
			r.Attrs["createAction"] = strconv.FormatInt(a.ID, 10)
			st.Resources[key] = r
			return nil
		}); err != nil {
			return err
		}
	}
	return nil
}

// waitLoadBalancers waits for the load balancers' create actions that the
// pools step left running. A load balancer whose creation failed is
// deleted and created again once: a failed action must not wedge the
// cluster, and the pools step is already done.
func (d *Deps) waitLoadBalancers(ctx context.Context, c *hcloud.Client, env *engine.Env, emit engine.Emit) error {
	for attempt := 0; ; attempt++ {
		failed, err := d.waitLBActions(ctx, c, env)
		if err != nil {
			return err
		}
		if len(failed) == 0 {
			return nil
		}
		if attempt > 0 {
			return fmt.Errorf("load balancer creation failed twice (%s): check the Hetzner status page, then run apply again", strings.Join(failed, "; "))
		}
		emit(engine.Event{Kind: engine.KindWarning, Resource: "load-balancers", Message: "creating again: " + strings.Join(failed, "; ")})
		if err := (&Pools{d}).loadBalancers(ctx, c, env, emit); err != nil {
			return err
		}
	}
}

// waitLBActions waits for the recorded create actions; each failed one is
// deleted with its load balancer and forgotten, and reported.
func (d *Deps) waitLBActions(ctx context.Context, c *hcloud.Client, env *engine.Env) ([]string, error) {
	var failed []string
	for _, key := range []string{"lb/ingress", "lb/api"} {
		r, ok := env.State.Resource(key)
		if !ok || r.Attrs["createAction"] == "" {
			continue
		}
		id, err := strconv.ParseInt(r.Attrs["createAction"], 10, 64)
		if err != nil {
			continue
		}
		err = d.waiter(c).WaitFor(ctx, &hcloud.Action{ID: id, Status: hcloud.ActionStatusRunning})
		var ae hcloud.ActionError
		switch {
		case errors.As(err, &ae):
			failed = append(failed, fmt.Sprintf("%s: %v", r.Name, err))
			if err := deleteLoadBalancer(ctx, d.waiter(c), c, r.ID); err != nil {
				return nil, fmt.Errorf("delete the failed load balancer %s: %w", r.Name, err)
			}
			if err := env.State.DeleteResource(key); err != nil {
				return nil, err
			}
		case err != nil:
			return nil, fmt.Errorf("load balancer %s: %w", r.Name, err)
		default:
			if err := env.State.Update(func(st *state.State) error {
				cur := st.Resources[key]
				delete(cur.Attrs, "createAction")
				st.Resources[key] = cur
				return nil
			}); err != nil {
				return nil, err
			}
		}
	}
	return failed, nil
}

// placementGroup finds the group, else creates it, checkpoints it, then
// sets its labels in place; another type needs a new group and is
// reported.
func (s *Pools) placementGroup(ctx context.Context, c *hcloud.Client, env *engine.Env, emit engine.Emit, g pgSpec) (*hcloud.PlacementGroup, error) {
	svc, w := placementgroup.New(&c.PlacementGroup), pgWant(g)
	e, err := findOrCreate(ctx, env, s.Name(), g.key, svc, query(env.State, g.key, g.labels), noActions(svc.Create, w))
	if err != nil {
		return nil, err
	}
	pg := e.got
	if !e.found {
		emitCreated(emit, e.res, pg.ID, "")
		return pg, nil
	}
	d := svc.Plan(pg, w)
	if err := reconcileChanges(emit, e.res, pg.ID, placementGroupChanges(pg, d), func() (err error) {
		pg, err = svc.Reconcile(ctx, pg, w, d)
		return err
	}); err != nil {
		return nil, err
	}
	return pg, nil
}

// pgWant is the spread group g the spec needs.
func pgWant(g pgSpec) placementgroup.Want { return placementgroup.Want{Name: g.name, Labels: g.labels} }

// placementGroupChanges shows a placement group diff for plan and events.
func placementGroupChanges(p *hcloud.PlacementGroup, d placementgroup.Diff) []engine.Change {
	var out []engine.Change
	if d.Type != "" {
		out = append(out, engine.Change{Field: "type", Old: string(p.Type), New: string(d.Type), Replace: true})
	}
	if !d.Labels.Empty() {
		out = append(out, labelsDisplay(d.Labels))
	}
	return out
}

func (s *Pools) firewall(ctx context.Context, c *hcloud.Client, env *engine.Env, emit engine.Emit, id string) error {
	sp := env.Spec
	src, err := s.d.firewallSources(ctx, env)
	if err != nil {
		return err
	}
	if src.Stale != nil {
		emit(engine.Event{Kind: engine.KindWarning, Resource: "firewall/" + sp.Name, Message: fmt.Sprintf("could not detect your address (%v): keeping %s", src.Stale, strings.Join(src.CIDRs, ", "))})
	}
	if err := s.d.refuseLockout(ctx, env, src, emit); err != nil {
		return err
	}
	if err := ensureFirewall(ctx, c, env, emit, s.Name(), firewallWant(sp, id, src.CIDRs)); err != nil {
		return err
	}
	return src.record(env)
}

// deleteLoadBalancer deletes a load balancer and waits for the deletion's
// action (Hetzner answers a delete with one since 2026-10-05; hcloud-go's
// LoadBalancerClient.DeleteWithResult). NotFound is success.
func deleteLoadBalancer(ctx context.Context, w cloud.Waiter, c *hcloud.Client, id int64) error {
	r, _, err := c.LoadBalancer.DeleteWithResult(ctx, &hcloud.LoadBalancer{ID: id})
	switch {
	case cloud.IsNotFound(err):
		return nil
	case err != nil:
		return err
	case r.Action == nil || r.Action.ID == 0:
		return nil
	}
	return w.WaitFor(ctx, r.Action)
}
