package steps

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/hetznercloud/hcloud-go/v2/hcloud"

	"github.com/ohmytalos/ohmytalos/internal/cloud"
	"github.com/ohmytalos/ohmytalos/internal/engine"
	"github.com/ohmytalos/ohmytalos/internal/spec"
	"github.com/ohmytalos/ohmytalos/internal/state"
)

// Pools creates what the node pools share: spread placement groups, the
// firewall and the load balancers.
type Pools struct{ d *Deps }

// Name implements engine.Step.
func (s *Pools) Name() string { return "pools" }

// Title implements engine.Step.
func (s *Pools) Title() string { return "Pools: placement groups, firewall, load balancers" }

// maxSpread is Hetzner's limit of servers in one spread placement group.
const maxSpread = 10

// placementGroup names the spread group of the i-th (1-based) server of a pool.
func placementGroup(cluster, pool string, i int) (key, name string, labels map[string]string) {
	n := (i-1)/maxSpread + 1
	name = fmt.Sprintf("%s-%s-%d", cluster, pool, n)
	return "pg/" + name, name, cloud.ClusterLabels(cluster, "placement-group", map[string]string{cloud.LabelPool: pool, "ohmytalos.io/group": fmt.Sprint(n)})
}

// pgSpec is a placement group the spec needs.
type pgSpec struct {
	key, name string
	labels    map[string]string
}

// placementGroups lists every group the spec needs.
func placementGroups(sp *spec.Spec) []pgSpec {
	var out []pgSpec
	seen := map[string]bool{}
	for _, n := range sp.Nodes() {
		key, name, labels := placementGroup(sp.Name, n.Pool, n.Index)
		if !seen[key] {
			seen[key] = true
			out = append(out, pgSpec{key, name, labels})
		}
	}
	return out
}

func ingressLB(sp *spec.Spec) (key, name string, labels map[string]string) {
	return "lb/ingress", sp.Name + "-ingress", cloud.ClusterLabels(sp.Name, "ingress-lb", nil)
}

func apiLB(sp *spec.Spec) (key, name string, labels map[string]string) {
	return "lb/api", sp.Name + "-api", cloud.ClusterLabels(sp.Name, "api-lb", nil)
}

func firewallLabels(sp *spec.Spec) map[string]string {
	return cloud.ClusterLabels(sp.Name, "firewall", nil)
}

// Plan implements engine.Step.
func (s *Pools) Plan(ctx context.Context, env *engine.Env) (engine.Plan, error) {
	sp := env.Spec
	p := engine.Plan{}
	add := func(key, kind, name, detail string) {
		a := engine.ActionCreate
		if _, ok := env.State.Resource(key); ok {
			a = engine.ActionReuse
		}
		p.Items = append(p.Items, engine.PlanItem{Action: a, Kind: kind, Name: name, Detail: detail})
	}
	for _, g := range placementGroups(sp) {
		add(g.key, "placement-group", g.name, "spread")
	}
	fwAction := engine.ActionCreate
	if _, ok := env.State.Resource("firewall"); ok {
		fwAction = engine.ActionReuse
	}
	if err := s.d.planFirewall(ctx, env, &p, fwAction); err != nil {
		return p, err
	}
	k, n, _ := ingressLB(sp)
	add(k, "load-balancer", n, sp.LoadBalancer.Type+": 80, 443 -> pools with loadBalancer: true, over the private network")
	if sp.Endpoint.Mode == spec.EndpointLoadBalancer {
		k, n, _ := apiLB(sp)
		add(k, "load-balancer", n, sp.LoadBalancer.Type+": 6443, 50000 -> control planes")
	}
	return p, nil
}

// Apply implements engine.Step.
func (s *Pools) Apply(ctx context.Context, env *engine.Env, emit engine.Emit) error {
	c, err := s.d.HCloud(ctx, env.Spec)
	if err != nil {
		return err
	}
	sp := env.Spec
	for _, g := range placementGroups(sp) {
		if _, err := s.placementGroup(ctx, c, env, emit, g.key, g.name, g.labels); err != nil {
			return err
		}
	}
	if err := s.firewall(ctx, c, env, emit); err != nil {
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
	key, name, labels := ingressLB(sp)
	target := cloud.Selector(map[string]string{cloud.LabelCluster: sp.Name, cloud.LabelIngress: "true"})
	if pending[key], err = s.loadBalancer(ctx, c, env, emit, net, key, name, labels, target, []int{80, 443}); err != nil {
		return err
	}
	if sp.Endpoint.Mode == spec.EndpointLoadBalancer {
		key, name, labels := apiLB(sp)
		target := cloud.Selector(map[string]string{cloud.LabelCluster: sp.Name, cloud.LabelRole: spec.RoleControlPlane})
		if pending[key], err = s.loadBalancer(ctx, c, env, emit, net, key, name, labels, target, []int{6443, 50000}); err != nil {
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
		err = c.Action.WaitFor(ctx, &hcloud.Action{ID: id, Status: hcloud.ActionStatusRunning})
		var ae hcloud.ActionError
		switch {
		case errors.As(err, &ae):
			failed = append(failed, fmt.Sprintf("%s: %v", r.Name, err))
			if _, derr := c.LoadBalancer.Delete(ctx, &hcloud.LoadBalancer{ID: r.ID}); derr != nil && !cloud.IsNotFound(derr) {
				return nil, fmt.Errorf("delete the failed load balancer %s: %w", r.Name, derr)
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

func (s *Pools) placementGroup(ctx context.Context, c *hcloud.Client, env *engine.Env, emit engine.Emit, key, name string, labels map[string]string) (*hcloud.PlacementGroup, error) {
	pg, _, err := ensure(ctx, env, emit, s.Name(), key, cloud.Selector(labels), resourceOps[*hcloud.PlacementGroup]{
		kind: "placement-group",
		get: func(ctx context.Context, id int64) (*hcloud.PlacementGroup, error) {
			pg, _, err := c.PlacementGroup.GetByID(ctx, id)
			return pg, err
		},
		list: func(ctx context.Context, sel string) ([]*hcloud.PlacementGroup, error) {
			return c.PlacementGroup.AllWithOpts(ctx, hcloud.PlacementGroupListOpts{ListOpts: hcloud.ListOpts{LabelSelector: sel}})
		},
		create: func(ctx context.Context) (*hcloud.PlacementGroup, error) {
			r, _, err := c.PlacementGroup.Create(ctx, hcloud.PlacementGroupCreateOpts{Name: name, Labels: labels, Type: hcloud.PlacementGroupTypeSpread})
			if err != nil {
				return nil, fmt.Errorf("create placement group %s: %w", name, err)
			}
			return r.PlacementGroup, nil
		},
		id:    func(p *hcloud.PlacementGroup) int64 { return p.ID },
		name:  func(p *hcloud.PlacementGroup) string { return p.Name },
		isNil: func(p *hcloud.PlacementGroup) bool { return p == nil },
	})
	return pg, err
}

func (s *Pools) firewall(ctx context.Context, c *hcloud.Client, env *engine.Env, emit engine.Emit) error {
	sp := env.Spec
	src, err := s.d.firewallSources(ctx, env)
	if err != nil {
		return err
	}
	if src.Stale != nil {
		emit(engine.Event{Kind: engine.KindWarning, Resource: "firewall/" + sp.Name, Message: fmt.Sprintf("could not detect your address (%v): keeping %s", src.Stale, strings.Join(src.CIDRs, ", "))})
	}
	labels := firewallLabels(sp)
	fw, created, err := ensure(ctx, env, emit, s.Name(), "firewall", cloud.Selector(labels), resourceOps[*hcloud.Firewall]{
		kind: "firewall",
		get: func(ctx context.Context, id int64) (*hcloud.Firewall, error) {
			f, _, err := c.Firewall.GetByID(ctx, id)
			return f, err
		},
		list: func(ctx context.Context, sel string) ([]*hcloud.Firewall, error) {
			return c.Firewall.AllWithOpts(ctx, hcloud.FirewallListOpts{ListOpts: hcloud.ListOpts{LabelSelector: sel}})
		},
		create: func(ctx context.Context) (*hcloud.Firewall, error) {
			r, _, err := c.Firewall.Create(ctx, hcloud.FirewallCreateOpts{
				Name: sp.Name, Labels: labels, Rules: firewallRules(src.CIDRs),
				ApplyTo: []hcloud.FirewallResource{{
					Type:          hcloud.FirewallResourceTypeLabelSelector,
					LabelSelector: &hcloud.FirewallResourceLabelSelector{Selector: cloud.ClusterSelector(sp.Name)},
				}},
			})
			if err != nil {
				return nil, fmt.Errorf("create firewall %s: %w", sp.Name, err)
			}
			if len(r.Actions) > 0 {
				if err := c.Action.WaitFor(ctx, r.Actions...); err != nil {
					return nil, fmt.Errorf("apply firewall %s: %w", sp.Name, err)
				}
			}
			return r.Firewall, nil
		},
		id:    func(f *hcloud.Firewall) int64 { return f.ID },
		name:  func(f *hcloud.Firewall) string { return f.Name },
		isNil: func(f *hcloud.Firewall) bool { return f == nil },
	})
	if err != nil {
		return err
	}
	if !created {
		if err := s.d.syncFirewallRules(ctx, c, fw, firewallRules(src.CIDRs), emit); err != nil {
			return err
		}
	}
	return src.record(env)
}

// loadBalancer ensures a load balancer in the network with a label-selector
// target over private IPs and TCP services on ports; it returns the create
// action to wait for (nil when reused).
func (s *Pools) loadBalancer(ctx context.Context, c *hcloud.Client, env *engine.Env, emit engine.Emit, netw *hcloud.Network,
	key, name string, labels map[string]string, target string, ports []int) (*hcloud.Action, error) {
	sp := env.Spec
	var action *hcloud.Action
	_, _, err := ensure(ctx, env, emit, s.Name(), key, cloud.Selector(labels), resourceOps[*hcloud.LoadBalancer]{
		kind: "load-balancer",
		get: func(ctx context.Context, id int64) (*hcloud.LoadBalancer, error) {
			lb, _, err := c.LoadBalancer.GetByID(ctx, id)
			return lb, err
		},
		list: func(ctx context.Context, sel string) ([]*hcloud.LoadBalancer, error) {
			return c.LoadBalancer.AllWithOpts(ctx, hcloud.LoadBalancerListOpts{ListOpts: hcloud.ListOpts{LabelSelector: sel}})
		},
		create: func(ctx context.Context) (*hcloud.LoadBalancer, error) {
			opts := hcloud.LoadBalancerCreateOpts{
				Name: name, Labels: labels,
				LoadBalancerType: &hcloud.LoadBalancerType{Name: sp.LoadBalancer.Type},
				Location:         &hcloud.Location{Name: sp.LoadBalancer.Location},
				Network:          netw,
				Targets: []hcloud.LoadBalancerCreateOptsTarget{{
					Type:          hcloud.LoadBalancerTargetTypeLabelSelector,
					LabelSelector: hcloud.LoadBalancerCreateOptsTargetLabelSelector{Selector: target},
					UsePrivateIP:  hcloud.Ptr(true),
				}},
			}
			for _, p := range ports {
				opts.Services = append(opts.Services, hcloud.LoadBalancerCreateOptsService{
					Protocol: hcloud.LoadBalancerServiceProtocolTCP, ListenPort: hcloud.Ptr(p), DestinationPort: hcloud.Ptr(p),
				})
			}
			r, _, err := c.LoadBalancer.Create(ctx, opts)
			if err != nil {
				return nil, fmt.Errorf("create load balancer %s: %w", name, err)
			}
			action = r.Action
			return r.LoadBalancer, nil
		},
		id:    func(l *hcloud.LoadBalancer) int64 { return l.ID },
		name:  func(l *hcloud.LoadBalancer) string { return l.Name },
		isNil: func(l *hcloud.LoadBalancer) bool { return l == nil },
	})
	return action, err
}
