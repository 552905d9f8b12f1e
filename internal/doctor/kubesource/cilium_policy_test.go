package kubesource

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/ohmytalos/ohmytalos/internal/doctor"
)

// TestSourceCiliumClusterwidePolicies reads spec and specs rules, toCIDR
// and toCIDRSet with their excepts, egress allow rules, enableDefaultDeny,
// the status condition Valid, and an unserved kind as no policies.
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
		}, "status": map[string]any{"conditions": []any{map[string]any{"type": "Valid", "status": "False", "message": "bad rule"}}}},
		map[string]any{"metadata": map[string]any{"name": "three"}, "spec": map[string]any{
			"endpointSelector":  map[string]any{},
			"enableDefaultDeny": map[string]any{"egress": false},
			"egress": []any{
				map[string]any{"toCIDRSet": []any{map[string]any{"cidr": "0.0.0.0/0", "except": []any{"169.254.169.254/32"}}}, "toEntities": []any{"cluster"}},
				map[string]any{"toPorts": []any{map[string]any{"ports": []any{map[string]any{"port": "53"}}}}},
				map[string]any{"toFQDNs": []any{map[string]any{"matchName": "example.com"}}, "toEndpoints": []any{map[string]any{"matchLabels": map[string]any{"app": "db"}}}},
			},
		}, "status": map[string]any{"conditions": []any{map[string]any{"type": "Valid", "status": "True"}}}},
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
	if len(ps) != 3 || ps[0].Name != "one" || len(ps[0].Rules) != 1 || len(ps[0].Rules[0].EgressDeny) != 1 ||
		ps[0].Rules[0].EgressDeny[0].CIDR != "169.254.0.0/16" || len(ps[0].Rules[0].EgressDeny[0].Except) != 1 || ps[0].Invalid != "" {
		t.Fatalf("policy one = %+v", ps)
	}
	two := ps[1].Rules
	if len(two) != 2 || two[0].EndpointSelector == nil || two[0].EndpointSelector.MatchLabels["k8s:io.kubernetes.pod.namespace"] != "default" ||
		len(two[0].EgressDeny) != 2 || two[0].EgressDeny[0].CIDR != "169.254.169.254/32" || two[1].EndpointSelector != nil || ps[1].Invalid != "bad rule" {
		t.Fatalf("policy two = %+v", ps[1])
	}
	three := ps[2]
	if three.Invalid != "" || len(three.Rules) != 1 || three.Rules[0].DefaultDenyEgress == nil || *three.Rules[0].DefaultDenyEgress {
		t.Fatalf("policy three = %+v", three)
	}
	eg := three.Rules[0].Egress
	if len(eg) != 3 || eg[0].All || len(eg[0].CIDRs) != 1 || eg[0].CIDRs[0].Except[0] != "169.254.169.254/32" || eg[0].Entities[0] != "cluster" ||
		!eg[1].All || eg[2].All || len(eg[2].Other) != 1 || eg[2].Other[0] != "toFQDNs" || len(eg[2].Endpoints) != 1 {
		t.Fatalf("policy three's egress = %+v", eg)
	}

	none := apiServer(t, p, map[string]any{"/apis/cilium.io/v2/ciliumclusterwidenetworkpolicies": http.StatusNotFound})
	src, err = New(kubeconfigFor(none.URL, p), "admin@prod")
	if err != nil {
		t.Fatal(err)
	}
	if ps, err := src.CiliumClusterwidePolicies(context.Background()); err != nil || ps != nil {
		t.Fatalf("kind not served: %v, %v; want nil, nil", ps, err)
	}
	if ps, err := src.NamespacedPolicies(context.Background()); err != nil || len(ps) != 0 {
		t.Fatalf("namespaced kinds not served: %v, %v; want none", ps, err)
	}
}

// TestSourceNamespacedPolicies reads CiliumNetworkPolicies with their
// namespace, and NetworkPolicies as one rule: a policy of type Egress
// (declared or implied by egress rules) puts its pods in default deny, an
// egress rule without "to" allows everything, ipBlocks are CIDR sets;
// an Ingress-only NetworkPolicy has no egress rule.
func TestSourceNamespacedPolicies(t *testing.T) {
	p := newPKI(t)
	cnps := map[string]any{"items": []any{map[string]any{"metadata": map[string]any{"name": "cnp", "namespace": "team-a"},
		"spec": map[string]any{"endpointSelector": map[string]any{}, "egressDeny": []any{map[string]any{"toCIDR": []any{"169.254.169.254/32"}}}}}}}
	nps := map[string]any{"items": []any{
		map[string]any{"metadata": map[string]any{"name": "egress", "namespace": "default"}, "spec": map[string]any{
			"podSelector": map[string]any{"matchLabels": map[string]any{"app": "web"}},
			"egress": []any{
				map[string]any{"to": []any{map[string]any{"ipBlock": map[string]any{"cidr": "0.0.0.0/0", "except": []any{"169.254.169.254/32"}}}, map[string]any{"podSelector": map[string]any{}}}},
				map[string]any{"ports": []any{map[string]any{"port": 53}}},
			}}},
		map[string]any{"metadata": map[string]any{"name": "ingress", "namespace": "default"}, "spec": map[string]any{
			"podSelector": map[string]any{}, "policyTypes": []any{"Ingress"}}},
	}}
	srv := apiServer(t, p, map[string]any{"/apis/cilium.io/v2/ciliumnetworkpolicies": cnps, "/apis/networking.k8s.io/v1/networkpolicies": nps})
	src, err := New(kubeconfigFor(srv.URL, p), "admin@prod")
	if err != nil {
		t.Fatal(err)
	}
	ps, err := src.NamespacedPolicies(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(ps) != 3 || ps[0].Name != "cnp" || ps[0].Namespace != "team-a" || len(ps[0].Rules) != 1 || len(ps[0].Rules[0].EgressDeny) != 1 {
		t.Fatalf("policies = %+v", ps)
	}
	np := ps[1]
	if np.Name != "NetworkPolicy egress" || np.Namespace != "default" || len(np.Rules) != 1 || np.Rules[0].DefaultDenyEgress == nil || !*np.Rules[0].DefaultDenyEgress ||
		np.Rules[0].EndpointSelector.MatchLabels["app"] != "web" {
		t.Fatalf("NetworkPolicy egress = %+v", np)
	}
	if eg := np.Rules[0].Egress; len(eg) != 2 || eg[0].All || len(eg[0].CIDRs) != 1 || eg[0].CIDRs[0].Except[0] != "169.254.169.254/32" || !eg[1].All {
		t.Fatalf("NetworkPolicy egress rules = %+v", eg)
	}
	if ing := ps[2]; ing.Namespace != "default" || len(ing.Rules) != 0 {
		t.Fatalf("NetworkPolicy ingress = %+v, want no rules", ing)
	}
}

// TestSourceMetadataPolicyEnforcement reads Cilium's enforcement from
// cilium-config, end to end through the doctor's metadata-policy check:
// enable-policy never and policy-audit-mode fail with the shipped deny
// policy in place; an allow-list excepting the metadata address passes.
func TestSourceMetadataPolicyEnforcement(t *testing.T) {
	p := newPKI(t)
	talosCaps := []string{"CHOWN", "KILL", "NET_ADMIN", "NET_RAW", "IPC_LOCK", "SYS_ADMIN", "SYS_RESOURCE", "DAC_OVERRIDE", "FOWNER", "SETGID", "SETUID"}
	deny := map[string]any{"items": []any{map[string]any{"metadata": map[string]any{"name": "ohmytalos-deny-metadata"}, "specs": []any{
		map[string]any{"endpointSelector": map[string]any{}, "egressDeny": []any{map[string]any{"toCIDR": []any{"169.254.169.254/32"}}},
			"enableDefaultDeny": map[string]any{"egress": false, "ingress": false}}}}}}
	allow := map[string]any{"items": []any{map[string]any{"metadata": map[string]any{"name": "allow-but-metadata"}, "spec": map[string]any{
		"endpointSelector": map[string]any{},
		"egress":           []any{map[string]any{"toCIDRSet": []any{map[string]any{"cidr": "0.0.0.0/0", "except": []any{"169.254.169.254/32"}}}}}}}}}
	cases := []struct {
		name     string
		config   map[string]string
		policies map[string]any
		status   doctor.Status
		want     string
	}{
		{"enable-policy never", map[string]string{"enable-policy": "never"}, deny, doctor.StatusFail, "enable-policy is never"},
		{"policy-audit-mode", map[string]string{"enable-policy": "default", "policy-audit-mode": "true"}, deny, doctor.StatusFail, "policy-audit-mode is true"},
		{"shipped deny", map[string]string{"enable-policy": "default", "policy-audit-mode": "false"}, deny, doctor.StatusPass, "denied by ohmytalos-deny-metadata rule 1"},
		{"allow-list excepting the metadata address", map[string]string{"enable-policy": "default"}, allow, doctor.StatusPass, "no egress rule selecting it allows 169.254.169.254"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			srv := apiServer(t, p, map[string]any{
				"/apis/apps/v1/namespaces/kube-system/daemonsets/cilium":  ciliumDaemonSet(talosCaps, []string{"NET_ADMIN", "SYS_ADMIN", "SYS_RESOURCE"}, false),
				"/api/v1/namespaces/kube-system/configmaps/cilium-config": map[string]any{"data": c.config},
				"/apis/cilium.io/v2/ciliumclusterwidenetworkpolicies":     c.policies,
				"/apis/cilium.io/v2/ciliumnetworkpolicies":                map[string]any{"items": []any{}},
				"/apis/networking.k8s.io/v1/networkpolicies":              map[string]any{"items": []any{}},
			})
			src, err := New(kubeconfigFor(srv.URL, p), "admin@prod")
			if err != nil {
				t.Fatal(err)
			}
			r := doctor.Run(context.Background(), &doctor.Env{Kube: src}, []string{"metadata-policy"}, nil)[0]
			if all := strings.Join(r.Evidence, "\n"); r.Status != c.status || !strings.Contains(all, c.want) {
				t.Fatalf("metadata-policy = %s, want %s with %q: %s; %s", r.Status, c.status, c.want, all, r.Explanation)
			}
		})
	}
}
