// Package firewall reconciles the cluster's Hetzner firewall with what
// the spec wants: its rules (set_rules), the label selector it applies to
// (apply_to_resources) and its labels, all in place. It works over
// Client, the few hcloud-go calls it makes, in the shape of
// cluster-api-provider-hetzner's pkg/services/hcloud services.
package firewall

import (
	"context"
	"fmt"
	"net"
	"slices"
	"strings"

	"github.com/hetznercloud/hcloud-go/v2/hcloud"

	"github.com/ohmytalos/ohmytalos/internal/reconcile"
)

// Client is the part of hcloud.IFirewallClient the service uses.
type Client interface {
	reconcile.Lookup[*hcloud.Firewall, hcloud.FirewallListOpts]
	Create(ctx context.Context, opts hcloud.FirewallCreateOpts) (hcloud.FirewallCreateResult, *hcloud.Response, error)
	Update(ctx context.Context, fw *hcloud.Firewall, opts hcloud.FirewallUpdateOpts) (*hcloud.Firewall, *hcloud.Response, error)
	SetRules(ctx context.Context, fw *hcloud.Firewall, opts hcloud.FirewallSetRulesOpts) ([]*hcloud.Action, *hcloud.Response, error)
	ApplyResources(ctx context.Context, fw *hcloud.Firewall, resources []hcloud.FirewallResource) ([]*hcloud.Action, *hcloud.Response, error)
}

// Want is the firewall the spec needs.
type Want struct {
	Name     string
	Labels   map[string]string
	Rules    []hcloud.FirewallRule // nil is sent as [] (every port closed)
	Selector string                // label selector of the servers it applies to
}

// Service reconciles a firewall; its Finder gives Find, Get and List.
type Service reconcile.Base[*hcloud.Firewall, hcloud.FirewallListOpts, Client]

// New returns a service over client; actions is used by Create and
// Reconcile only.
func New(client Client, actions reconcile.ActionWaiter) *Service {
	return (*Service)(reconcile.NewBase("firewall", client, func(o hcloud.ListOpts) hcloud.FirewallListOpts { return hcloud.FirewallListOpts{ListOpts: o} }, meta, actions, nil))
}

func meta(f *hcloud.Firewall) reconcile.Meta {
	return reconcile.Meta{ID: f.ID, Name: f.Name, Labels: f.Labels}
}

// rules is w's rules as sent: "rules": [] closes every port; null is refused.
func (w Want) rules() []hcloud.FirewallRule {
	if w.Rules == nil {
		return []hcloud.FirewallRule{}
	}
	return w.Rules
}

func (w Want) applyTo() []hcloud.FirewallResource {
	return []hcloud.FirewallResource{{
		Type:          hcloud.FirewallResourceTypeLabelSelector,
		LabelSelector: &hcloud.FirewallResourceLabelSelector{Selector: w.Selector},
	}}
}

// Create creates the firewall w describes and waits until it applies.
func (s *Service) Create(ctx context.Context, w Want) (*hcloud.Firewall, error) {
	r, _, err := s.Client.Create(ctx, hcloud.FirewallCreateOpts{Name: w.Name, Labels: w.Labels, Rules: w.rules(), ApplyTo: w.applyTo()})
	if err != nil {
		return nil, fmt.Errorf("create firewall %s: %w", w.Name, err)
	}
	if err := s.Actions.WaitFor(ctx, r.Actions...); err != nil {
		return nil, fmt.Errorf("apply firewall %s: %w", w.Name, err)
	}
	return r.Firewall, nil
}

// Diff is how a live firewall differs from Want; everything changes in
// place.
type Diff struct {
	Rules   bool   // the rule set differs (compared in FormatRules' order)
	ApplyTo string // the selector to apply the firewall to; "" when applied
	Labels  reconcile.LabelDiff
}

// Empty reports whether the firewall is as wanted.
func (d Diff) Empty() bool { return !d.Rules && d.ApplyTo == "" && d.Labels.Empty() }

// Plan compares a live firewall with w.
func (s *Service) Plan(f *hcloud.Firewall, w Want) Diff {
	d := Diff{Rules: FormatRules(f.Rules) != FormatRules(w.rules()), Labels: reconcile.DiffLabels(f.Labels, w.Labels)}
	if !AppliesTo(f, w.Selector) {
		d.ApplyTo = w.Selector
	}
	return d
}

// Reconcile makes d's changes: the rules, then what it applies to, then
// its labels; each action is waited for.
func (s *Service) Reconcile(ctx context.Context, f *hcloud.Firewall, w Want, d Diff) error {
	if d.Rules {
		acts, _, err := s.Client.SetRules(ctx, f, hcloud.FirewallSetRulesOpts{Rules: w.rules()})
		if err == nil {
			err = s.Actions.WaitFor(ctx, acts...)
		}
		if err != nil {
			return fmt.Errorf("set the rules of firewall %s: %w", f.Name, err)
		}
		f.Rules = w.rules()
	}
	if d.ApplyTo != "" {
		acts, _, err := s.Client.ApplyResources(ctx, f, w.applyTo())
		if err != nil {
			return fmt.Errorf("apply firewall %s to the cluster's servers: %w", f.Name, err)
		}
		if err := s.Actions.WaitFor(ctx, acts...); err != nil {
			return fmt.Errorf("apply firewall %s: %w", f.Name, err)
		}
	}
	if !d.Labels.Empty() {
		if _, _, err := s.Client.Update(ctx, f, hcloud.FirewallUpdateOpts{Labels: reconcile.MergeLabels(f.Labels, w.Labels)}); err != nil {
			return fmt.Errorf("set the labels of firewall %s: %w", f.Name, err)
		}
	}
	return nil
}

// AppliesTo reports whether the firewall applies to the label selector.
func AppliesTo(f *hcloud.Firewall, selector string) bool {
	return slices.ContainsFunc(f.AppliedTo, func(r hcloud.FirewallResource) bool {
		return r.Type == hcloud.FirewallResourceTypeLabelSelector && r.LabelSelector != nil && r.LabelSelector.Selector == selector
	})
}

// FormatRules renders rules in a stable order ("in tcp 50000 from
// 203.0.113.7/32 (Talos API); ..."): two rule sets are the same when
// their renderings are.
func FormatRules(rules []hcloud.FirewallRule) string {
	out := make([]string, 0, len(rules))
	for _, r := range rules {
		line := string(r.Direction) + " " + string(r.Protocol)
		if r.Port != nil {
			line += " " + *r.Port
		}
		if len(r.SourceIPs) > 0 {
			line += " from " + CIDRs(r.SourceIPs)
		}
		if len(r.DestinationIPs) > 0 {
			line += " to " + CIDRs(r.DestinationIPs)
		}
		if r.Description != nil && *r.Description != "" {
			line += " (" + *r.Description + ")"
		}
		out = append(out, line)
	}
	slices.Sort(out)
	return strings.Join(out, "; ")
}

// CIDRs renders networks sorted, comma-separated.
func CIDRs(nets []net.IPNet) string {
	out := make([]string, len(nets))
	for i := range nets {
		out[i] = nets[i].String()
	}
	slices.Sort(out)
	return strings.Join(out, ",")
}
