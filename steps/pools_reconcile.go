package steps

import (
	"context"
	"fmt"
	"net"
	"strings"

	"github.com/hetznercloud/hcloud-go/v2/hcloud"

	"github.com/ohmytalos/ohmytalos/internal/cloud"
	"github.com/ohmytalos/ohmytalos/internal/engine"
	"github.com/ohmytalos/ohmytalos/internal/reconcile/firewall"
	"github.com/ohmytalos/ohmytalos/internal/reconcile/loadbalancer"
	"github.com/ohmytalos/ohmytalos/internal/spec"
)

// Firewall and load balancer change fields.
const (
	fieldRules     = "rules"
	fieldAppliedTo = "applied to"
	fieldType      = "type"
	fieldLocation  = "location"
	fieldTargets   = "targets"
	fieldNetwork   = "network"
	fieldService   = "service :" // + listen port, for display only
)

// firewallWant is the firewall admitting sources (see firewallSources)
// to the Talos and Kubernetes APIs of the cluster's servers, by label
// selector.
func firewallWant(sp *spec.Spec, id string, sources []string) firewall.Want {
	return firewall.Want{Name: sp.Name, Labels: firewallLabels(sp, id), Rules: firewallRules(sources), Selector: cloud.ClusterSelector(sp.Name)}
}

// ensureFirewall finds the firewall, else creates it, checkpoints it,
// then sets its rules, the label selector it applies to and its labels,
// all in place. The typed diff (svc.Plan) is shown through
// firewallChanges and made by svc.Reconcile.
func ensureFirewall(ctx context.Context, c *hcloud.Client, env *engine.Env, emit engine.Emit, step engine.StepName, w firewall.Want) error {
	svc := firewall.New(&c.Firewall, &c.Action)
	e, err := findOrCreate(ctx, env, step, keyFirewall, svc, query(env.State, keyFirewall, w.Labels), noActions(svc.Create, w))
	if err != nil {
		return err
	}
	f := e.got
	if !e.found {
		emitCreated(emit, e.res, f.ID, "")
		return nil
	}
	d := svc.Plan(f, w)
	return reconcileChanges(emit, e.res, f.ID, firewallChanges(f, w, d), func() error { return svc.Reconcile(ctx, f, w, d) })
}

// planFirewallItem is item with what apply would do to the firewall.
func planFirewallItem(ctx context.Context, c *hcloud.Client, env *engine.Env, w firewall.Want, item engine.PlanItem) (engine.PlanItem, error) {
	svc := firewall.New(&c.Firewall, &c.Action)
	f, found, err := svc.Find(ctx, query(env.State, keyFirewall, w.Labels))
	if err != nil || !found {
		return planned(item, found, nil), err
	}
	return planned(item, true, firewallChanges(f, w, svc.Plan(f, w))), nil
}

// firewallChanges shows a firewall diff for plan and events.
func firewallChanges(f *hcloud.Firewall, w firewall.Want, d firewall.Diff) []engine.Change {
	var out []engine.Change
	if d.Rules {
		out = append(out, engine.Change{Field: fieldRules, Old: formatRules(f.Rules), New: formatRules(w.Rules)})
	}
	if d.ApplyTo != "" {
		out = append(out, engine.Change{Field: fieldAppliedTo, Old: formatApplied(f.AppliedTo), New: "label selector " + d.ApplyTo})
	}
	if !d.Labels.Empty() {
		out = append(out, labelsDisplay(d.Labels))
	}
	return out
}

// formatRules is firewall.FormatRules.
func formatRules(rules []hcloud.FirewallRule) string { return firewall.FormatRules(rules) }

// cidrs is firewall.CIDRs.
func cidrs(nets []net.IPNet) string { return firewall.CIDRs(nets) }

func formatApplied(res []hcloud.FirewallResource) string {
	var out []string
	for _, r := range res {
		switch {
		case r.LabelSelector != nil:
			out = append(out, "label selector "+r.LabelSelector.Selector)
		case r.Server != nil:
			out = append(out, fmt.Sprintf("server %d", r.Server.ID))
		}
	}
	return strings.Join(out, ", ")
}

// lbSpec is a load balancer the spec needs.
type lbSpec struct {
	key, name, detail string
	labels            map[string]string
	target            string // label selector of the targets
	ports             []int
	// servicesBy is the Service whose cloud controller owns the services
	// and targets ("" when ohmytalos owns them).
	servicesBy string
}

// loadBalancerSpecs lists the ingress load balancer and, in loadbalancer
// endpoint mode, the API one.
func loadBalancerSpecs(sp *spec.Spec, id string) []lbSpec {
	out := []lbSpec{ingressLBSpec(sp, id)}
	if sp.Endpoint.Mode == spec.EndpointLoadBalancer {
		key, name, labels := apiLB(sp, id)
		out = append(out, lbSpec{key: key, name: name, labels: labels,
			detail: sp.LoadBalancer.Type + ": 6443, 50000 -> control planes",
			target: cloud.Selector(map[string]string{cloud.LabelCluster: sp.Name, cloud.LabelRole: spec.RoleControlPlane}), ports: []int{6443, 50000}})
	}
	return out
}

// The health check of every service (see loadbalancer.WantService).
const (
	healthInterval = loadbalancer.HealthInterval
	healthTimeout  = loadbalancer.HealthTimeout
	healthRetries  = loadbalancer.HealthRetries
)

// lbService is one TCP passthrough service the spec wants.
func lbService(port int) hcloud.LoadBalancerService { return loadbalancer.WantService(port) }

func formatService(s hcloud.LoadBalancerService) string {
	h := s.HealthCheck
	return fmt.Sprintf("%s %d->%d proxyprotocol=%t health=%s:%d every %s timeout %s retries %d",
		s.Protocol, s.ListenPort, s.DestinationPort, s.Proxyprotocol, h.Protocol, h.Port, h.Interval, h.Timeout, h.Retries)
}

// hasTarget reports whether lb targets selector over private IPs.
func hasTarget(lb *hcloud.LoadBalancer, selector string) bool {
	return loadbalancer.HasTarget(lb, selector)
}

func formatTargets(lb *hcloud.LoadBalancer) string {
	var out []string
	for _, t := range lb.Targets {
		switch {
		case t.LabelSelector != nil:
			out = append(out, fmt.Sprintf("label selector %s (private IP %t)", t.LabelSelector.Selector, t.UsePrivateIP))
		case t.Server != nil && t.Server.Server != nil:
			out = append(out, fmt.Sprintf("server %d", t.Server.Server.ID))
		case t.IP != nil:
			out = append(out, "ip "+t.IP.IP)
		}
	}
	return strings.Join(out, ", ")
}
