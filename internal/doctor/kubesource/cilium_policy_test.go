package kubesource

import (
	"context"
	"net/http"
	"testing"
)

// TestSourceCiliumClusterwidePolicies reads spec and specs rules, toCIDR
// and toCIDRSet (a set with except is not a plain deny of the whole
// prefix), and an unserved kind as no policies.
func TestSourceCiliumClusterwidePolicies(t *testing.T) {
	p := newPKI(t)
	list := map[string]any{"items": []any{
		map[string]any{"metadata": map[string]any{"name": "one"}, "spec": map[string]any{
			"endpointSelector": map[string]any{},
			"egressDeny":       []any{map[string]any{"toCIDRSet": []any{map[string]any{"cidr": "169.254.0.0/16", "except": []any{"169.254.169.254/32"}}}}},
		}},
		map[string]any{"metadata": map[string]any{"name": "two"}, "specs": []any{
			map[string]any{"endpointSelector": map[string]any{"matchLabels": map[string]any{"k8s:io.kubernetes.pod.namespace": "default"}},
				"egressDeny": []any{map[string]any{"toCIDR": []any{"169.254.169.254/32"}}, map[string]any{"toCIDRSet": []any{map[string]any{"cidr": "10.0.0.0/8"}}}}},
			map[string]any{"nodeSelector": map[string]any{}},
		}},
	}}
	srv := apiServer(t, p, map[string]any{"/apis/cilium.io/v2/ciliumclusterwidenetworkpolicies": list})
	src, err := New(kubeconfigFor(srv.URL, p), "admin@prod")
	if err != nil {
		t.Fatal(err)
	}
	ps, err := src.CiliumClusterwidePolicies(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(ps) != 2 || ps[0].Name != "one" || len(ps[0].Rules) != 1 || len(ps[0].Rules[0].EgressDenyCIDRs) != 0 {
		t.Fatalf("policy one = %+v", ps)
	}
	two := ps[1].Rules
	if len(two) != 2 || two[0].EndpointSelector == nil || two[0].EndpointSelector.MatchLabels["k8s:io.kubernetes.pod.namespace"] != "default" ||
		len(two[0].EgressDenyCIDRs) != 2 || two[0].EgressDenyCIDRs[0] != "169.254.169.254/32" || two[1].EndpointSelector != nil {
		t.Fatalf("policy two = %+v", two)
	}

	none := apiServer(t, p, map[string]any{"/apis/cilium.io/v2/ciliumclusterwidenetworkpolicies": http.StatusNotFound})
	src, err = New(kubeconfigFor(none.URL, p), "admin@prod")
	if err != nil {
		t.Fatal(err)
	}
	if ps, err := src.CiliumClusterwidePolicies(context.Background()); err != nil || ps != nil {
		t.Fatalf("kind not served: %v, %v; want nil, nil", ps, err)
	}
}
