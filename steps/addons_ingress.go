package steps

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/hetznercloud/hcloud-go/v2/hcloud"

	"github.com/ohmytalos/ohmytalos/internal/addons"
	"github.com/ohmytalos/ohmytalos/internal/engine"
)

// ingressLBIPv6 is the ingress load balancer's public IPv6, read by the
// ID the state holds ("" when it has none, does not exist yet, or the
// ingress is off): Traefik's values offer IPv6 exactly when it is there
// and domains are set (addons.IngressIPv6). Only the ID in this cluster's
// state is read, never a load balancer found by name.
func (d *Deps) ingressLBIPv6(ctx context.Context, env *engine.Env) (string, error) {
	if !env.Spec.Addons.Ingress.On() || len(env.Spec.Domains) == 0 {
		return "", nil
	}
	r, ok := env.State.Resource(keyIngressLB)
	if !ok || r.ID == 0 {
		return "", nil
	}
	c, err := d.HCloud(ctx, env.Spec)
	if err != nil {
		return "", err
	}
	lb, _, err := c.LoadBalancer.GetByID(ctx, r.ID)
	if err != nil {
		return "", fmt.Errorf("read the ingress load balancer %d for its IPv6: %w", r.ID, err)
	}
	if lb == nil || lb.PublicNet.IPv6.IP == nil {
		return "", nil
	}
	return lb.PublicNet.IPv6.IP.String(), nil
}

// lbHealthPoll is the least time between two reads of the ingress load
// balancer: a target's health changes at most once per check interval
// (15 s by the cloud controller's default), so reading it more often only
// spends the project's API budget (3,600 requests an hour). Deps.LBHealthPoll
// replaces it where the health checks are faster (the tests' sandbox).
const lbHealthPoll = 3 * time.Second

// lbHealth is what one look at the ingress load balancer found: its
// services, and per target server the health of every service.
type lbHealth struct {
	services int
	healthy  []string
	waiting  []string // "demo-worker-1 (80: unknown, 443: healthy)"
}

// done: the cloud controller has set its services, it has targets, and
// every target passes every service's health check. That is what the
// doctor's lb-targets check reports as PASS.
func (h lbHealth) done() bool {
	return h.services > 0 && len(h.healthy) > 0 && len(h.waiting) == 0
}

func (h lbHealth) String() string {
	total := len(h.healthy) + len(h.waiting)
	switch {
	case h.services == 0:
		return "no services yet: the cloud controller sets them for Service " + addons.IngressServiceRef()
	case total == 0:
		return "no targets yet"
	case len(h.waiting) == 0:
		return fmt.Sprintf("%d/%d targets healthy", len(h.healthy), total)
	}
	return fmt.Sprintf("%d/%d targets healthy; waiting for %s", len(h.healthy), total, strings.Join(h.waiting, ", "))
}

// readLBHealth reads the load balancer's targets and their health.
func readLBHealth(lb *hcloud.LoadBalancer) lbHealth {
	h := lbHealth{services: len(lb.Services)}
	var servers []hcloud.LoadBalancerTarget
	for _, t := range lb.Targets {
		switch t.Type {
		case hcloud.LoadBalancerTargetTypeServer:
			servers = append(servers, t)
		case hcloud.LoadBalancerTargetTypeLabelSelector:
			servers = append(servers, t.Targets...)
		}
	}
	for _, t := range servers {
		name := "server"
		if t.Server != nil && t.Server.Server != nil {
			name = t.Server.Server.Name
			if name == "" {
				name = fmt.Sprint("server ", t.Server.Server.ID)
			}
		}
		var states []string
		ok := len(t.HealthStatus) == len(lb.Services)
		for _, s := range t.HealthStatus {
			states = append(states, fmt.Sprintf("%d: %s", s.ListenPort, s.Status))
			ok = ok && s.Status == hcloud.LoadBalancerTargetHealthStatusStatusHealthy
		}
		if ok {
			h.healthy = append(h.healthy, name)
		} else {
			h.waiting = append(h.waiting, name+" ("+strings.Join(states, ", ")+")")
		}
	}
	sort.Strings(h.healthy)
	sort.Strings(h.waiting)
	return h
}

// waitIngressLB waits, within ctx, until the ingress load balancer's
// targets pass their health checks: the cloud controller sets its
// services and targets for the Traefik Service once that Service exists,
// and Hetzner marks a target healthy only after its first check interval.
// Until then a request through the load balancer gets an empty reply
// (field notes, pitfall 3), so the cluster is not ready to use.
func (s *Addons) waitIngressLB(ctx context.Context, env *engine.Env, emit engine.Emit) error {
	if !env.Spec.Addons.Ingress.On() {
		return nil
	}
	name := addons.IngressLBName(env.Spec)
	if addons.LBNodes(env.Spec) == 0 {
		// Nothing can become a target: say so, and let the doctor's
		// lb-targets check show it (field notes, pitfall 3).
		emit(engine.Event{Kind: engine.KindWarning, Resource: "lb/" + name,
			Message: "ingress load balancer " + name + " gets no targets: the pools with loadBalancer: true have no servers (control planes are excluded from load balancers), so nothing answers behind it; give a worker pool servers"})
		return nil
	}
	r, ok := env.State.Resource(keyIngressLB)
	if !ok || r.ID == 0 {
		return fmt.Errorf("the ingress load balancer is not in the state: run the pools step first (addons.ingress binds Traefik's Service to it)")
	}
	c, err := s.d.HCloud(ctx, env.Spec)
	if err != nil {
		return err
	}
	res := "lb/" + name
	last, lastErr := "", error(nil)
	for {
		lb, _, err := c.LoadBalancer.GetByID(ctx, r.ID)
		switch {
		case ctx.Err() != nil:
		case err != nil:
			lastErr = err
		case lb == nil:
			return fmt.Errorf("the ingress load balancer %s (%d) is gone: run apply again to create it", name, r.ID)
		default:
			h := readLBHealth(lb)
			if msg := h.String(); msg != last {
				emit(engine.Event{Kind: engine.KindProgress, Resource: res, Message: "ingress load balancer " + name + ": " + msg})
				last = msg
			}
			if h.done() {
				return nil
			}
		}
		if werr := sleep(ctx, max(s.d.poll(), s.d.lbHealthPoll())); werr != nil {
			why := last
			if lastErr != nil {
				why += "; last API error: " + s.d.Redact(lastErr.Error())
			}
			return fmt.Errorf("the ingress load balancer %s does not pass its health checks after %s: %s. Run \"ohmytalos doctor --check lb-targets\" to see why, then \"ohmytalos apply --only addons\" to wait again: %w",
				name, s.d.nodeTimeout(), why, werr)
		}
	}
}
