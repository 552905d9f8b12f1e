package kubesource

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/ohmytalos/ohmytalos/internal/doctor"
)

// cidrRule is a Cilium CIDRRule (pkg/policy/api cidr.go): cidr less except.
type cidrRule struct {
	CIDR   string   `json:"cidr"`
	Except []string `json:"except"`
}

// ciliumEgress is the part of an egress or egressDeny rule the doctor
// reads (pkg/policy/api egress.go EgressCommonRule and EgressRule); the
// fields of otherPeers are only noted as present.
type ciliumEgress struct {
	ToCIDR      []string               `json:"toCIDR"`
	ToCIDRSet   []cidrRule             `json:"toCIDRSet"`
	ToEntities  []string               `json:"toEntities"`
	ToEndpoints []metav1.LabelSelector `json:"toEndpoints"`
	ToFQDNs     json.RawMessage        `json:"toFQDNs"`
	ToServices  json.RawMessage        `json:"toServices"`
	ToGroups    json.RawMessage        `json:"toGroups"`
	ToNodes     json.RawMessage        `json:"toNodes"`
	ToRequires  json.RawMessage        `json:"toRequires"`
	ICMPs       json.RawMessage        `json:"icmps"`
}

// ciliumRule is the part of a Cilium policy rule the doctor reads
// (pkg/policy/api rule.go Rule: endpointSelector, egress, egressDeny,
// enableDefaultDeny).
type ciliumRule struct {
	EndpointSelector  *metav1.LabelSelector `json:"endpointSelector"`
	Egress            []ciliumEgress        `json:"egress"`
	EgressDeny        []ciliumEgress        `json:"egressDeny"`
	EnableDefaultDeny struct {
		Egress *bool `json:"egress"`
	} `json:"enableDefaultDeny"`
}

// ciliumPolicyItem is one CiliumClusterwideNetworkPolicy or
// CiliumNetworkPolicy, with its status condition Valid (set by the
// operator's policy validation, cilium_api_v2.PolicyConditionValid).
type ciliumPolicyItem struct {
	Metadata struct {
		Name      string `json:"name"`
		Namespace string `json:"namespace"`
	} `json:"metadata"`
	Spec   *ciliumRule  `json:"spec"`
	Specs  []ciliumRule `json:"specs"`
	Status struct {
		Conditions []struct {
			Type    string `json:"type"`
			Status  string `json:"status"`
			Message string `json:"message"`
		} `json:"conditions"`
	} `json:"status"`
}

// CiliumClusterwidePolicies lists the CiliumClusterwideNetworkPolicies
// (GET /apis/cilium.io/v2/ciliumclusterwidenetworkpolicies); nil, nil when
// the API server does not serve the kind.
func (s *Source) CiliumClusterwidePolicies(ctx context.Context) ([]doctor.CiliumPolicy, error) {
	out := []doctor.CiliumPolicy{}
	err := s.list(ctx, "/apis/cilium.io/v2/ciliumclusterwidenetworkpolicies", nil, func(raw json.RawMessage) error {
		return appendCiliumPolicy(&out, raw, false)
	})
	if errors.Is(err, errNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return out, nil
}

// NamespacedPolicies lists the CiliumNetworkPolicies and the Kubernetes
// NetworkPolicies of every namespace; a kind the API server does not
// serve holds none.
func (s *Source) NamespacedPolicies(ctx context.Context) ([]doctor.CiliumPolicy, error) {
	out := []doctor.CiliumPolicy{}
	err := s.list(ctx, "/apis/cilium.io/v2/ciliumnetworkpolicies", nil, func(raw json.RawMessage) error {
		return appendCiliumPolicy(&out, raw, true)
	})
	if err != nil && !errors.Is(err, errNotFound) {
		return nil, err
	}
	err = s.list(ctx, "/apis/networking.k8s.io/v1/networkpolicies", nil, func(raw json.RawMessage) error {
		var np networkPolicy
		if err := json.Unmarshal(raw, &np); err != nil {
			return fmt.Errorf("decode a NetworkPolicy: %w", err)
		}
		out = append(out, np.doctorPolicy())
		return nil
	})
	if err != nil && !errors.Is(err, errNotFound) {
		return nil, err
	}
	return out, nil
}

func appendCiliumPolicy(out *[]doctor.CiliumPolicy, raw json.RawMessage, namespaced bool) error {
	var it ciliumPolicyItem
	if err := json.Unmarshal(raw, &it); err != nil {
		return fmt.Errorf("decode a Cilium policy: %w", err)
	}
	p := doctor.CiliumPolicy{Name: it.Metadata.Name}
	if namespaced {
		p.Namespace = it.Metadata.Namespace
	}
	for _, c := range it.Status.Conditions {
		if c.Type == "Valid" && c.Status == "False" {
			p.Invalid = c.Message
			if p.Invalid == "" {
				p.Invalid = "no message"
			}
		}
	}
	rules := it.Specs
	if it.Spec != nil {
		rules = append([]ciliumRule{*it.Spec}, rules...)
	}
	for _, r := range rules {
		p.Rules = append(p.Rules, doctorRule(r))
	}
	*out = append(*out, p)
	return nil
}

func cidrSets(e ciliumEgress) []doctor.CIDRSet {
	var out []doctor.CIDRSet
	for _, c := range e.ToCIDR {
		out = append(out, doctor.CIDRSet{CIDR: c})
	}
	for _, set := range e.ToCIDRSet {
		out = append(out, doctor.CIDRSet{CIDR: set.CIDR, Except: set.Except})
	}
	return out
}

func doctorRule(r ciliumRule) doctor.CiliumRule {
	dr := doctor.CiliumRule{EndpointSelector: r.EndpointSelector, DefaultDenyEgress: r.EnableDefaultDeny.Egress}
	for _, d := range r.EgressDeny {
		dr.EgressDeny = append(dr.EgressDeny, cidrSets(d)...)
	}
	for _, e := range r.Egress {
		de := doctor.CiliumEgress{CIDRs: cidrSets(e), Entities: e.ToEntities, Endpoints: e.ToEndpoints}
		for _, f := range []struct {
			name string
			raw  json.RawMessage
		}{{"toFQDNs", e.ToFQDNs}, {"toServices", e.ToServices}, {"toGroups", e.ToGroups}, {"toNodes", e.ToNodes}, {"toRequires", e.ToRequires}, {"icmps", e.ICMPs}} {
			if present(f.raw) {
				de.Other = append(de.Other, f.name)
			}
		}
		de.All = len(de.CIDRs) == 0 && len(de.Entities) == 0 && len(de.Endpoints) == 0 && len(de.Other) == 0
		dr.Egress = append(dr.Egress, de)
	}
	return dr
}

// present reports whether a JSON field holds something (not absent,
// null or an empty list).
func present(raw json.RawMessage) bool {
	s := string(raw)
	return s != "" && s != "null" && s != "[]"
}

// networkPolicy is the part of a networking.k8s.io/v1 NetworkPolicy the
// doctor reads: which pods it selects, and its egress rules when its
// policyTypes include Egress (the default when it has egress rules).
type networkPolicy struct {
	Metadata struct {
		Name      string `json:"name"`
		Namespace string `json:"namespace"`
	} `json:"metadata"`
	Spec struct {
		PodSelector metav1.LabelSelector `json:"podSelector"`
		PolicyTypes []string             `json:"policyTypes"`
		Egress      []struct {
			To []struct {
				IPBlock *cidrRule `json:"ipBlock"`
			} `json:"to"`
		} `json:"egress"`
	} `json:"spec"`
}

// doctorPolicy is the NetworkPolicy as one rule: a policy of type Egress
// puts the pods it selects into egress default deny; an egress rule with
// no "to" allows every destination; pod and namespace peers select pods
// only, ipBlocks are CIDR sets.
func (np networkPolicy) doctorPolicy() doctor.CiliumPolicy {
	sel := np.Spec.PodSelector
	p := doctor.CiliumPolicy{Name: "NetworkPolicy " + np.Metadata.Name, Namespace: np.Metadata.Namespace}
	egress := len(np.Spec.PolicyTypes) == 0 && len(np.Spec.Egress) > 0
	for _, t := range np.Spec.PolicyTypes {
		egress = egress || t == "Egress"
	}
	if !egress {
		return p
	}
	yes := true
	r := doctor.CiliumRule{EndpointSelector: &sel, DefaultDenyEgress: &yes}
	for _, e := range np.Spec.Egress {
		de := doctor.CiliumEgress{All: len(e.To) == 0}
		for _, to := range e.To {
			if to.IPBlock != nil {
				de.CIDRs = append(de.CIDRs, doctor.CIDRSet{CIDR: to.IPBlock.CIDR, Except: to.IPBlock.Except})
			}
		}
		r.Egress = append(r.Egress, de)
	}
	p.Rules = []doctor.CiliumRule{r}
	return p
}
