package kubesource

import (
	"context"
	"errors"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/ohmytalos/ohmytalos/internal/doctor"
)

// ciliumRule is the part of a Cilium policy rule the doctor reads
// (cilium/cilium pkg/policy/api Rule: endpointSelector, egressDeny with
// toCIDR and toCIDRSet).
type ciliumRule struct {
	EndpointSelector *metav1.LabelSelector `json:"endpointSelector"`
	EgressDeny       []struct {
		ToCIDR    []string `json:"toCIDR"`
		ToCIDRSet []struct {
			CIDR   string   `json:"cidr"`
			Except []string `json:"except"`
		} `json:"toCIDRSet"`
	} `json:"egressDeny"`
}

type ciliumPolicyList struct {
	Items []struct {
		Metadata struct {
			Name string `json:"name"`
		} `json:"metadata"`
		Spec  *ciliumRule  `json:"spec"`
		Specs []ciliumRule `json:"specs"`
	} `json:"items"`
}

// CiliumClusterwidePolicies lists the CiliumClusterwideNetworkPolicies
// (GET /apis/cilium.io/v2/ciliumclusterwidenetworkpolicies); nil, nil when
// the API server does not serve the kind.
func (s *Source) CiliumClusterwidePolicies(ctx context.Context) ([]doctor.CiliumPolicy, error) {
	var list ciliumPolicyList
	err := s.get(ctx, "/apis/cilium.io/v2/ciliumclusterwidenetworkpolicies", &list)
	if errors.Is(err, errNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	out := []doctor.CiliumPolicy{}
	for _, it := range list.Items {
		p := doctor.CiliumPolicy{Name: it.Metadata.Name}
		rules := it.Specs
		if it.Spec != nil {
			rules = append([]ciliumRule{*it.Spec}, rules...)
		}
		for _, r := range rules {
			p.Rules = append(p.Rules, doctorRule(r))
		}
		out = append(out, p)
	}
	return out, nil
}

func doctorRule(r ciliumRule) doctor.CiliumRule {
	dr := doctor.CiliumRule{EndpointSelector: r.EndpointSelector}
	for _, d := range r.EgressDeny {
		dr.EgressDenyCIDRs = append(dr.EgressDenyCIDRs, d.ToCIDR...)
		for _, set := range d.ToCIDRSet {
			if len(set.Except) == 0 {
				dr.EgressDenyCIDRs = append(dr.EgressDenyCIDRs, set.CIDR)
			}
		}
	}
	return dr
}
