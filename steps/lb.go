package steps

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/hetznercloud/hcloud-go/v2/hcloud"

	"github.com/ohmytalos/ohmytalos/internal/engine"
	"github.com/ohmytalos/ohmytalos/internal/spec"
)

// loadBalancer ensures a load balancer in the network with a label-selector
// target over private IPs and TCP services on its ports; it returns the
// create action to wait for (nil when it already existed).
func (s *Pools) loadBalancer(ctx context.Context, c *hcloud.Client, env *engine.Env, emit engine.Emit, netw *hcloud.Network, lb lbSpec) (*hcloud.Action, error) {
	var action *hcloud.Action
	_, _, err := ensure(ctx, env, emit, s.Name(), lb.key, lb.labels, loadBalancerOps(c, env.Spec, lb, netw, s.d, &action))
	return action, err
}

// loadBalancerOps reconciles a load balancer (see lbDiff). d (for retries
// while the load balancer is locked) and action (where create leaves its
// action) may be nil when only planning.
func loadBalancerOps(c *hcloud.Client, sp *spec.Spec, want lbSpec, netw *hcloud.Network, d *Deps, action **hcloud.Action) resourceOps[*hcloud.LoadBalancer] {
	return resourceOps[*hcloud.LoadBalancer]{
		kind: "load-balancer",
		get: func(ctx context.Context, id int64) (*hcloud.LoadBalancer, error) {
			lb, _, err := c.LoadBalancer.GetByID(ctx, id)
			return lb, err
		},
		list: func(ctx context.Context, sel string) ([]*hcloud.LoadBalancer, error) {
			return c.LoadBalancer.AllWithOpts(ctx, hcloud.LoadBalancerListOpts{ListOpts: hcloud.ListOpts{LabelSelector: sel}})
		},
		create: func(ctx context.Context) (*hcloud.LoadBalancer, error) {
			r, _, err := c.LoadBalancer.Create(ctx, lbCreateOpts(sp, want, netw))
			if err != nil {
				return nil, fmt.Errorf("create load balancer %s: %w", want.name, err)
			}
			if action != nil {
				*action = r.Action
			}
			return r.LoadBalancer, nil
		},
		id:     func(l *hcloud.LoadBalancer) int64 { return l.ID },
		name:   func(l *hcloud.LoadBalancer) string { return l.Name },
		isNil:  func(l *hcloud.LoadBalancer) bool { return l == nil },
		labels: func(l *hcloud.LoadBalancer) map[string]string { return l.Labels },
		diff:   func(l *hcloud.LoadBalancer) []engine.Change { return lbDiff(sp, want, netw, l) },
		update: func(ctx context.Context, l *hcloud.LoadBalancer, changes []engine.Change) (*hcloud.LoadBalancer, error) {
			return l, lbUpdate(ctx, c, d, sp, want, netw, l, changes)
		},
	}
}

func lbCreateOpts(sp *spec.Spec, want lbSpec, netw *hcloud.Network) hcloud.LoadBalancerCreateOpts {
	opts := hcloud.LoadBalancerCreateOpts{
		Name: want.name, Labels: want.labels,
		LoadBalancerType: &hcloud.LoadBalancerType{Name: sp.LoadBalancer.Type},
		Location:         &hcloud.Location{Name: sp.LoadBalancer.Location},
		Network:          netw,
		Targets: []hcloud.LoadBalancerCreateOptsTarget{{
			Type:          hcloud.LoadBalancerTargetTypeLabelSelector,
			LabelSelector: hcloud.LoadBalancerCreateOptsTargetLabelSelector{Selector: want.target},
			UsePrivateIP:  hcloud.Ptr(true),
		}},
	}
	for _, p := range want.ports {
		w := lbService(p)
		opts.Services = append(opts.Services, hcloud.LoadBalancerCreateOptsService{
			Protocol: w.Protocol, ListenPort: hcloud.Ptr(w.ListenPort), DestinationPort: hcloud.Ptr(w.DestinationPort),
			Proxyprotocol: hcloud.Ptr(w.Proxyprotocol),
			HealthCheck: &hcloud.LoadBalancerCreateOptsServiceHealthCheck{Protocol: w.HealthCheck.Protocol, Port: hcloud.Ptr(w.HealthCheck.Port),
				Interval: hcloud.Ptr(w.HealthCheck.Interval), Timeout: hcloud.Ptr(w.HealthCheck.Timeout), Retries: hcloud.Ptr(w.HealthCheck.Retries)},
		})
	}
	return opts
}

// lbUpdate makes the in-place changes in order: type, network (targets
// use private IPs), services, targets, labels; each action is waited for.
func lbUpdate(ctx context.Context, c *hcloud.Client, d *Deps, sp *spec.Spec, want lbSpec, netw *hcloud.Network, lb *hcloud.LoadBalancer, changes []engine.Change) error {
	do := func(what string, call func() (*hcloud.Action, error)) error {
		var a *hcloud.Action
		err := d.whileLocked(ctx, func() (err error) {
			a, err = call()
			return err
		})
		if err == nil && a != nil {
			err = c.Action.WaitFor(ctx, a)
		}
		if err != nil {
			return fmt.Errorf("%s of load balancer %s: %w", what, lb.Name, err)
		}
		return nil
	}
	if has(changes, fieldType) {
		if err := do("change the type", func() (*hcloud.Action, error) {
			a, _, err := c.LoadBalancer.ChangeType(ctx, lb, hcloud.LoadBalancerChangeTypeOpts{LoadBalancerType: &hcloud.LoadBalancerType{Name: sp.LoadBalancer.Type}})
			return a, err
		}); err != nil {
			return err
		}
	}
	if has(changes, fieldNetwork) {
		if err := do("attach the network", func() (*hcloud.Action, error) {
			a, _, err := c.LoadBalancer.AttachToNetwork(ctx, lb, hcloud.LoadBalancerAttachToNetworkOpts{Network: netw})
			return a, err
		}); err != nil {
			return err
		}
	}
	for _, ch := range changes {
		port, ok := strings.CutPrefix(ch.Field, fieldService)
		if !ok {
			continue
		}
		n, err := strconv.Atoi(port)
		if err != nil {
			return fmt.Errorf("service field %q: %w", ch.Field, err)
		}
		if err := do("set the service on port "+port, func() (*hcloud.Action, error) { return lbServiceCall(ctx, c, lb, n, ch) }); err != nil {
			return err
		}
	}
	if has(changes, fieldTargets) {
		if err := lbTarget(ctx, c, lb, want.target, do); err != nil {
			return err
		}
	}
	if has(changes, fieldLabels) {
		if _, _, err := c.LoadBalancer.Update(ctx, lb, hcloud.LoadBalancerUpdateOpts{Labels: mergedLabels(lb.Labels, want.labels)}); err != nil {
			return fmt.Errorf("set the labels of load balancer %s: %w", lb.Name, err)
		}
	}
	return nil
}

// lbServiceCall adds, updates or deletes the service on port as ch says.
func lbServiceCall(ctx context.Context, c *hcloud.Client, lb *hcloud.LoadBalancer, port int, ch engine.Change) (*hcloud.Action, error) {
	w := lbService(port)
	hc := w.HealthCheck
	switch {
	case ch.New == "":
		a, _, err := c.LoadBalancer.DeleteService(ctx, lb, port)
		return a, err
	case ch.Old == "":
		a, _, err := c.LoadBalancer.AddService(ctx, lb, hcloud.LoadBalancerAddServiceOpts{
			Protocol: w.Protocol, ListenPort: hcloud.Ptr(port), DestinationPort: hcloud.Ptr(w.DestinationPort), Proxyprotocol: hcloud.Ptr(w.Proxyprotocol),
			HealthCheck: &hcloud.LoadBalancerAddServiceOptsHealthCheck{Protocol: hc.Protocol, Port: hcloud.Ptr(hc.Port),
				Interval: hcloud.Ptr(hc.Interval), Timeout: hcloud.Ptr(hc.Timeout), Retries: hcloud.Ptr(hc.Retries)},
		})
		return a, err
	default:
		a, _, err := c.LoadBalancer.UpdateService(ctx, lb, port, hcloud.LoadBalancerUpdateServiceOpts{
			Protocol: w.Protocol, DestinationPort: hcloud.Ptr(w.DestinationPort), Proxyprotocol: hcloud.Ptr(w.Proxyprotocol),
			HealthCheck: &hcloud.LoadBalancerUpdateServiceOptsHealthCheck{Protocol: hc.Protocol, Port: hcloud.Ptr(hc.Port),
				Interval: hcloud.Ptr(hc.Interval), Timeout: hcloud.Ptr(hc.Timeout), Retries: hcloud.Ptr(hc.Retries)},
		})
		return a, err
	}
}

// lbTarget replaces a label selector target that does not use private IPs
// and adds the one the spec wants.
func lbTarget(ctx context.Context, c *hcloud.Client, lb *hcloud.LoadBalancer, selector string, do func(string, func() (*hcloud.Action, error)) error) error {
	for _, t := range lb.Targets {
		if t.LabelSelector != nil && t.LabelSelector.Selector == selector && !t.UsePrivateIP {
			if err := do("remove the public target", func() (*hcloud.Action, error) {
				a, _, err := c.LoadBalancer.RemoveLabelSelectorTarget(ctx, lb, selector)
				return a, err
			}); err != nil {
				return err
			}
		}
	}
	return do("add the target", func() (*hcloud.Action, error) {
		a, _, err := c.LoadBalancer.AddLabelSelectorTarget(ctx, lb, hcloud.LoadBalancerAddLabelSelectorTargetOpts{Selector: selector, UsePrivateIP: hcloud.Ptr(true)})
		return a, err
	})
}
