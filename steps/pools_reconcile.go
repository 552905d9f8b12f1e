package steps

import (
	"context"
	"fmt"
	"net"
	"slices"
	"strings"

	"github.com/hetznercloud/hcloud-go/v2/hcloud"

	"github.com/ohmytalos/ohmytalos/internal/cloud"
	"github.com/ohmytalos/ohmytalos/internal/engine"
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

// firewallOps reconciles the firewall: its rules (set_rules) admitting
// sources (see firewallSources), the label selector it applies to
// (apply_to_resources) and its labels, all in place.
func firewallOps(c *hcloud.Client, sp *spec.Spec, id string, sources []string) resourceOps[*hcloud.Firewall] {
	labels := firewallLabels(sp, id)
	want := firewallRules(sources)
	if want == nil {
		want = []hcloud.FirewallRule{} // "rules": [] closes every port; null is refused
	}
	applyTo := hcloud.FirewallResource{
		Type:          hcloud.FirewallResourceTypeLabelSelector,
		LabelSelector: &hcloud.FirewallResourceLabelSelector{Selector: cloud.ClusterSelector(sp.Name)},
	}
	return resourceOps[*hcloud.Firewall]{
		kind: "firewall",
		get: func(ctx context.Context, id int64) (*hcloud.Firewall, error) {
			f, _, err := c.Firewall.GetByID(ctx, id)
			return f, err
		},
		list: func(ctx context.Context, sel string) ([]*hcloud.Firewall, error) {
			return c.Firewall.AllWithOpts(ctx, hcloud.FirewallListOpts{ListOpts: hcloud.ListOpts{LabelSelector: sel}})
		},
		create: func(ctx context.Context) (*hcloud.Firewall, []*hcloud.Action, error) {
			r, _, err := c.Firewall.Create(ctx, hcloud.FirewallCreateOpts{
				Name: sp.Name, Labels: labels, Rules: want, ApplyTo: []hcloud.FirewallResource{applyTo},
			})
			if err != nil {
				return nil, nil, fmt.Errorf("create firewall %s: %w", sp.Name, err)
			}
			if err := c.Action.WaitFor(ctx, r.Actions...); err != nil {
				return nil, nil, fmt.Errorf("apply firewall %s: %w", sp.Name, err)
			}
			return r.Firewall, nil, nil
		},
		id:     func(f *hcloud.Firewall) int64 { return f.ID },
		name:   func(f *hcloud.Firewall) string { return f.Name },
		isNil:  func(f *hcloud.Firewall) bool { return f == nil },
		labels: func(f *hcloud.Firewall) map[string]string { return f.Labels },
		diff: func(f *hcloud.Firewall) []engine.Change {
			var out []engine.Change
			if have, w := formatRules(f.Rules), formatRules(want); have != w {
				out = append(out, engine.Change{Field: fieldRules, Old: have, New: w})
			}
			if !appliesTo(f, applyTo.LabelSelector.Selector) {
				out = append(out, engine.Change{Field: fieldAppliedTo, Old: formatApplied(f.AppliedTo),
					New: "label selector " + applyTo.LabelSelector.Selector})
			}
			return append(out, labelsChange(f.Labels, labels)...)
		},
		update: func(ctx context.Context, f *hcloud.Firewall, changes []engine.Change) (*hcloud.Firewall, error) {
			if has(changes, fieldRules) {
				acts, _, err := c.Firewall.SetRules(ctx, f, hcloud.FirewallSetRulesOpts{Rules: want})
				if err != nil {
					return f, fmt.Errorf("set the rules of firewall %s: %w", f.Name, err)
				}
				if err := c.Action.WaitFor(ctx, acts...); err != nil {
					return f, fmt.Errorf("set the rules of firewall %s: %w", f.Name, err)
				}
				f.Rules = want
			}
			if has(changes, fieldAppliedTo) {
				acts, _, err := c.Firewall.ApplyResources(ctx, f, []hcloud.FirewallResource{applyTo})
				if err != nil {
					return f, fmt.Errorf("apply firewall %s to the cluster's servers: %w", f.Name, err)
				}
				if err := c.Action.WaitFor(ctx, acts...); err != nil {
					return f, fmt.Errorf("apply firewall %s: %w", f.Name, err)
				}
			}
			if has(changes, fieldLabels) {
				if _, _, err := c.Firewall.Update(ctx, f, hcloud.FirewallUpdateOpts{Labels: mergedLabels(f.Labels, labels)}); err != nil {
					return f, fmt.Errorf("set the labels of firewall %s: %w", f.Name, err)
				}
			}
			return f, nil
		},
	}
}

// formatRules renders rules in a stable order ("in tcp 50000 from
// 203.0.113.7/32 (Talos API); ..."), so two rule sets compare as strings.
func formatRules(rules []hcloud.FirewallRule) string {
	out := make([]string, 0, len(rules))
	for _, r := range rules {
		line := string(r.Direction) + " " + string(r.Protocol)
		if r.Port != nil {
			line += " " + *r.Port
		}
		if len(r.SourceIPs) > 0 {
			line += " from " + cidrs(r.SourceIPs)
		}
		if len(r.DestinationIPs) > 0 {
			line += " to " + cidrs(r.DestinationIPs)
		}
		if r.Description != nil && *r.Description != "" {
			line += " (" + *r.Description + ")"
		}
		out = append(out, line)
	}
	slices.Sort(out)
	return strings.Join(out, "; ")
}

func cidrs(nets []net.IPNet) string {
	out := make([]string, len(nets))
	for i := range nets {
		out[i] = nets[i].String()
	}
	slices.Sort(out)
	return strings.Join(out, ",")
}

func appliesTo(f *hcloud.Firewall, selector string) bool {
	return slices.ContainsFunc(f.AppliedTo, func(r hcloud.FirewallResource) bool {
		return r.Type == hcloud.FirewallResourceTypeLabelSelector && r.LabelSelector != nil && r.LabelSelector.Selector == selector
	})
}

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
}

// loadBalancerSpecs lists the ingress load balancer and, in loadbalancer
// endpoint mode, the API one.
func loadBalancerSpecs(sp *spec.Spec, id string) []lbSpec {
	key, name, labels := ingressLB(sp, id)
	out := []lbSpec{{key: key, name: name, labels: labels,
		detail: sp.LoadBalancer.Type + ": 80, 443 -> pools with loadBalancer: true, over the private network",
		target: cloud.Selector(map[string]string{cloud.LabelCluster: sp.Name, cloud.LabelIngress: "true"}), ports: []int{80, 443}}}
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
