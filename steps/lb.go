package steps

import (
	"context"
	"fmt"

	"github.com/hetznercloud/hcloud-go/v2/hcloud"

	"github.com/ohmytalos/ohmytalos/internal/engine"
	"github.com/ohmytalos/ohmytalos/internal/reconcile/loadbalancer"
	"github.com/ohmytalos/ohmytalos/internal/spec"
)

// loadBalancer ensures a load balancer in the network with a label-selector
// target over private IPs and TCP services on its ports: found, else
// created, checkpointed, then its type, services, targets, network and
// labels set in place (another location is reported). It returns the
// create action to wait for (nil when it already existed).
func (s *Pools) loadBalancer(ctx context.Context, c *hcloud.Client, env *engine.Env, emit engine.Emit, netw *hcloud.Network, lb lbSpec) (*hcloud.Action, error) {
	svc, w := s.d.loadBalancerService(c), lbWant(env.Spec, lb, netw)
	e, err := findOrCreate(ctx, env, s.Name(), lb.key, svc, query(env.State, lb.key, lb.labels), func(ctx context.Context) (*hcloud.LoadBalancer, []*hcloud.Action, error) {
		r, err := svc.Create(ctx, w)
		return r.LoadBalancer, []*hcloud.Action{r.Action}, err
	})
	if err != nil {
		return e.action(), err
	}
	got := e.got
	if !e.found {
		emitCreated(emit, e.res, got.ID, "")
		return e.action(), nil
	}
	d := svc.Plan(got, w)
	return nil, reconcileChanges(emit, e.res, got.ID, lbChanges(got, w, d), func() error { return svc.Reconcile(ctx, got, w, d) })
}

// planLoadBalancer is item with what apply would do to a load balancer,
// and the live load balancer (nil when it does not exist yet): the plan's
// notes read its addresses without another request.
func (d *Deps) planLoadBalancer(ctx context.Context, c *hcloud.Client, env *engine.Env, netw *hcloud.Network, lb lbSpec, item engine.PlanItem) (*hcloud.LoadBalancer, engine.PlanItem, error) {
	svc, w := d.loadBalancerService(c), lbWant(env.Spec, lb, netw)
	got, found, err := svc.Find(ctx, query(env.State, lb.key, lb.labels))
	if err != nil || !found {
		return nil, planned(item, found, nil), err
	}
	return got, planned(item, true, lbChanges(got, w, svc.Plan(got, w))), nil
}

// loadBalancerService reconciles load balancers through c, retrying while
// one is locked.
func (d *Deps) loadBalancerService(c *hcloud.Client) *loadbalancer.Service {
	return loadbalancer.New(&c.LoadBalancer, &c.Action, d.whileLocked)
}

// lbWant is what the load balancer service reconciles towards.
func lbWant(sp *spec.Spec, lb lbSpec, netw *hcloud.Network) loadbalancer.Want {
	return loadbalancer.Want{Name: lb.name, Labels: lb.labels, Type: sp.LoadBalancer.Type, Location: sp.LoadBalancer.Location,
		Target: lb.target, Ports: lb.ports, Network: netw, ServicesBy: lb.servicesBy}
}

// lbChanges shows a load balancer diff for plan and events: type,
// location (needs a new load balancer), services, targets, network and
// labels.
func lbChanges(lb *hcloud.LoadBalancer, w loadbalancer.Want, d loadbalancer.Diff) []engine.Change {
	var out []engine.Change
	if d.Type != "" {
		out = append(out, engine.Change{Field: fieldType, Old: lb.LoadBalancerType.Name, New: d.Type})
	}
	if d.Location != "" {
		out = append(out, engine.Change{Field: fieldLocation, Old: lb.Location.Name, New: d.Location, Replace: true})
	}
	for _, op := range d.Services.Ops(w.Ports) {
		ch := engine.Change{Field: fmt.Sprintf("%s%d", fieldService, op.Port)}
		if have, ok := loadbalancer.ServiceOn(lb, op.Port); ok {
			ch.Old = formatService(have)
		}
		if op.Kind != loadbalancer.OpDelete {
			ch.New = formatService(lbService(op.Port))
		}
		out = append(out, ch)
	}
	switch {
	case d.Targets.Add != "":
		out = append(out, engine.Change{Field: fieldTargets, Old: formatTargets(lb), New: fmt.Sprintf("label selector %s (private IP true)", d.Targets.Add)})
	case len(d.Targets.Remove) > 0:
		out = append(out, engine.Change{Field: fieldTargets, Old: formatTargets(lb), New: "managed by the cloud controller for Service " + w.ServicesBy})
	}
	if d.Network != nil {
		out = append(out, engine.Change{Field: fieldNetwork, New: d.Network.Name})
	}
	if !d.Labels.Empty() {
		out = append(out, labelsDisplay(d.Labels))
	}
	return out
}

// lbCreateOpts is the create request of a load balancer the spec needs.
func lbCreateOpts(sp *spec.Spec, lb lbSpec, netw *hcloud.Network) hcloud.LoadBalancerCreateOpts {
	return loadbalancer.CreateOpts(lbWant(sp, lb, netw))
}
