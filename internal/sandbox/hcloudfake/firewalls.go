package hcloudfake

import (
	"fmt"
	"maps"
	"net/http"
	"net/netip"
	"slices"
	"strconv"
	"strings"

	"github.com/hetznercloud/hcloud-go/v2/hcloud/schema"
)

// firewallKind is the collection behind /firewalls.
func (f *Fake) firewallKind() *collection[*schema.Firewall, schema.Firewall] {
	c := &collection[*schema.Firewall, schema.Firewall]{plural: "firewalls", single: "firewall", noun: "firewall",
		items: f.firewalls, render: f.renderFirewall, create: f.createFirewall, action: f.firewallAction,
		fields: func(x *schema.Firewall) (int64, *string, *map[string]string) { return x.ID, &x.Name, &x.Labels },
		remove: func(_ *request, id int64, fw *schema.Firewall) (*action, error) {
			if len(fw.AppliedTo) > 0 {
				return nil, errCode(http.StatusUnprocessableEntity, "resource_in_use",
					fmt.Sprintf("firewall %d is still applied to %d resources; remove it from them first", id, len(fw.AppliedTo)))
			}
			return nil, nil
		},
	}
	c.update = patchBy(c, func(r *schema.FirewallUpdateRequest) (*string, *map[string]string) { return r.Name, r.Labels })
	return c
}

// checkRules validates firewall rules and converts them to their stored form.
func checkRules(in []schema.FirewallRuleRequest) ([]schema.FirewallRule, error) {
	out := []schema.FirewallRule{}
	for _, r := range in {
		if r.Direction != "in" && r.Direction != "out" {
			return nil, errInvalid("rules", fmt.Sprintf("direction %q must be in or out", r.Direction))
		}
		switch r.Protocol {
		case "tcp", "udp":
			if r.Port == nil || *r.Port == "" {
				return nil, errInvalid("rules", fmt.Sprintf("a %s rule needs a port", r.Protocol))
			}
			if _, _, ok := portRange(*r.Port); !ok {
				return nil, errInvalid("rules", fmt.Sprintf("port %q is not a port (1-65535), a range such as 1024-5000, or any", *r.Port))
			}
		case "icmp", "esp", "gre":
			if r.Port != nil {
				return nil, errInvalid("rules", fmt.Sprintf("a %s rule takes no port", r.Protocol))
			}
		default:
			return nil, errInvalid("rules", fmt.Sprintf("protocol %q is not one of tcp, udp, icmp, esp, gre", r.Protocol))
		}
		ips := r.SourceIPs
		if r.Direction == "out" {
			ips = r.DestinationIPs
		}
		if len(ips) == 0 {
			return nil, errInvalid("rules", fmt.Sprintf("an %s rule needs at least one address", r.Direction))
		}
		for _, ip := range append(slices.Clone(r.SourceIPs), r.DestinationIPs...) {
			if _, err := netip.ParsePrefix(ip); err != nil {
				return nil, errInvalid("rules", fmt.Sprintf("%q is not a CIDR", ip))
			}
		}
		out = append(out, schema.FirewallRule{Direction: r.Direction, SourceIPs: nonNil(r.SourceIPs),
			DestinationIPs: nonNil(r.DestinationIPs), Protocol: r.Protocol, Port: r.Port, Description: r.Description})
	}
	return out, nil
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return slices.Clone(s)
}

// checkApply validates apply_to / remove_from resources.
func (f *Fake) checkApply(field string, res []schema.FirewallResource) error {
	for _, r := range res {
		switch {
		case r.Type == "server" && r.Server != nil:
			if _, ok := f.servers[r.Server.ID]; !ok {
				return errCode(http.StatusNotFound, "firewall_resource_not_found", fmt.Sprintf("server %d not found", r.Server.ID))
			}
		case r.Type == "label_selector" && r.LabelSelector != nil:
			if _, err := parseSelector(r.LabelSelector.Selector); err != nil {
				return errInvalid(field, err.Error())
			}
		default:
			return errInvalid(field, fmt.Sprintf("resource type %q needs its matching server or label_selector field", r.Type))
		}
	}
	return nil
}

func sameResource(a, b schema.FirewallResource) bool {
	if a.Type != b.Type {
		return false
	}
	if a.Type == "server" {
		return a.Server != nil && b.Server != nil && a.Server.ID == b.Server.ID
	}
	return a.LabelSelector != nil && b.LabelSelector != nil && a.LabelSelector.Selector == b.LabelSelector.Selector
}

func (f *Fake) createFirewall(rq *request) (int, any, error) {
	req, err := decodeCreate(rq, f.firewallKind(), func(r *schema.FirewallCreateRequest) string { return r.Name })
	if err != nil {
		return 0, nil, err
	}
	rules, err := checkRules(req.Rules)
	if err != nil {
		return 0, nil, err
	}
	if err := f.checkApply("apply_to", req.ApplyTo); err != nil {
		return 0, nil, err
	}
	if err := checkNewLabels(req.Labels); err != nil {
		return 0, nil, err
	}
	fw := &schema.Firewall{ID: f.nextID(), Name: req.Name, Labels: labelsOrEmpty(req.Labels),
		Created: rq.created(), Rules: rules, AppliedTo: []schema.FirewallResource{}}
	for _, r := range req.ApplyTo {
		fw.AppliedTo = append(fw.AppliedTo, schema.FirewallResource{Type: r.Type, Server: r.Server, LabelSelector: r.LabelSelector})
	}
	f.firewalls[fw.ID] = fw
	var actions []*action
	for _, r := range req.ApplyTo {
		actions = append(actions, f.newAction("apply_firewall", rq.now, f.applyRefs(fw.ID, r)...))
	}
	body := f.actionsBody(rq.now, actions...)
	body["firewall"] = f.renderFirewall(fw)
	return http.StatusCreated, body, nil
}

func (f *Fake) applyRefs(fwID int64, r schema.FirewallResource) []schema.ActionResourceReference {
	refs := []schema.ActionResourceReference{ref("firewall", fwID)}
	if r.Server != nil {
		refs = append(refs, ref("server", r.Server.ID))
	}
	return refs
}

func (f *Fake) firewallAction(rq *request, fw *schema.Firewall, command string) (int, any, error) {
	var actions []*action
	switch command {
	case "set_rules":
		var req schema.FirewallActionSetRulesRequest
		if err := rq.decode(&req); err != nil {
			return 0, nil, err
		}
		rules, err := checkRules(req.Rules)
		if err != nil {
			return 0, nil, err
		}
		fw.Rules = rules
		actions = append(actions, f.newAction("set_firewall_rules", rq.now, ref("firewall", fw.ID)))
		for _, sid := range slices.Sorted(maps.Keys(f.servers)) {
			if f.firewallAppliesTo(fw, f.servers[sid]) {
				actions = append(actions, f.newAction("apply_firewall", rq.now, ref("firewall", fw.ID), ref("server", sid)))
			}
		}
	case "apply_to_resources":
		var req schema.FirewallActionApplyToResourcesRequest
		if err := rq.decode(&req); err != nil {
			return 0, nil, err
		}
		if err := f.checkApply("apply_to", req.ApplyTo); err != nil {
			return 0, nil, err
		}
		for _, r := range req.ApplyTo {
			if slices.ContainsFunc(fw.AppliedTo, func(x schema.FirewallResource) bool { return sameResource(x, r) }) {
				return 0, nil, errCode(http.StatusUnprocessableEntity, "firewall_already_applied", fmt.Sprintf("firewall %d is already applied to this %s", fw.ID, r.Type))
			}
		}
		for _, r := range req.ApplyTo {
			fw.AppliedTo = append(fw.AppliedTo, schema.FirewallResource{Type: r.Type, Server: r.Server, LabelSelector: r.LabelSelector})
			actions = append(actions, f.newAction("apply_firewall", rq.now, f.applyRefs(fw.ID, r)...))
		}
	case "remove_from_resources":
		var req schema.FirewallActionRemoveFromResourcesRequest
		if err := rq.decode(&req); err != nil {
			return 0, nil, err
		}
		if err := f.checkApply("remove_from", req.RemoveFrom); err != nil {
			return 0, nil, err
		}
		for _, r := range req.RemoveFrom {
			i := slices.IndexFunc(fw.AppliedTo, func(x schema.FirewallResource) bool { return sameResource(x, r) })
			if i < 0 && r.Server != nil && f.firewallAppliesTo(fw, f.servers[r.Server.ID]) {
				// API description, remove_firewall_from_resources: 422
				// firewall_managed_by_label_selector.
				return 0, nil, errCode(http.StatusUnprocessableEntity, "firewall_managed_by_label_selector",
					fmt.Sprintf("firewall %d reaches server %d through a label selector; change the selector or the server's labels instead", fw.ID, r.Server.ID))
			}
			if i < 0 {
				// Not applied: nothing to do. Hetzner no longer answers
				// firewall_already_removed (hcloud-go v2.52.0 error.go marks
				// it deprecated, changelog 2025-08-04).
				continue
			}
			fw.AppliedTo = slices.Delete(fw.AppliedTo, i, i+1)
			actions = append(actions, f.newAction("remove_firewall", rq.now, f.applyRefs(fw.ID, r)...))
		}
	default:
		return 0, nil, errNoRoute(rq)
	}
	return http.StatusCreated, f.actionsBody(rq.now, actions...), nil
}

// firewallAppliesTo reports whether a firewall covers a server, directly or
// through a label selector.
func (f *Fake) firewallAppliesTo(fw *schema.Firewall, ss *serverState) bool {
	for _, r := range fw.AppliedTo {
		if r.Type == "server" && r.Server != nil && r.Server.ID == ss.s.ID {
			return true
		}
		if r.Type == "label_selector" && r.LabelSelector != nil {
			if sel, err := parseSelector(r.LabelSelector.Selector); err == nil && sel.matches(ss.s.Labels) {
				return true
			}
		}
	}
	return false
}

// renderFirewall resolves label selectors into applied_to_resources.
func (f *Fake) renderFirewall(fw *schema.Firewall) schema.Firewall {
	out := *fw
	out.Labels = maps.Clone(fw.Labels)
	out.Rules = slices.Clone(fw.Rules)
	out.AppliedTo = []schema.FirewallResource{}
	for _, r := range fw.AppliedTo {
		r.AppliedToResources = nil
		if r.Type == "label_selector" && r.LabelSelector != nil {
			sel, _ := parseSelector(r.LabelSelector.Selector)
			for _, sid := range slices.Sorted(maps.Keys(f.servers)) {
				if sel.matches(f.servers[sid].s.Labels) {
					r.AppliedToResources = append(r.AppliedToResources,
						schema.FirewallResource{Type: "server", Server: &schema.FirewallResourceServer{ID: sid}})
				}
			}
		}
		out.AppliedTo = append(out.AppliedTo, r)
	}
	return out
}

// portRange parses a rule's port: a single port, a range "a-b" (API
// description, Firewall rule "port": "A port range can be specified by
// separating two ports with a dash") or "any".
func portRange(s string) (lo, hi int, ok bool) {
	if s == "any" {
		return 1, 65535, true
	}
	a, b, isRange := strings.Cut(s, "-")
	lo, errA := strconv.Atoi(a)
	hi, errB := lo, error(nil)
	if isRange {
		hi, errB = strconv.Atoi(b)
	}
	if errA != nil || errB != nil || lo < 1 || hi > 65535 || lo > hi {
		return 0, 0, false
	}
	return lo, hi, true
}
