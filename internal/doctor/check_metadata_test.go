package doctor

import (
	"context"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// shippedPolicy mirrors the policy the Cilium add-on renders
// (internal/addons/metadata_policy.go): everything outside kube-system,
// and kube-system but the CSI driver's pods.
func shippedPolicy() CiliumPolicy {
	deny := []CIDRSet{{CIDR: "169.254.169.254/32"}}
	return CiliumPolicy{Name: "ohmytalos-deny-metadata", Rules: []CiliumRule{
		{EndpointSelector: &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{
			{Key: "io.kubernetes.pod.namespace", Operator: metav1.LabelSelectorOpNotIn, Values: []string{"kube-system"}}}},
			EgressDeny: deny},
		{EndpointSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"io.kubernetes.pod.namespace": "kube-system"},
			MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "app", Operator: metav1.LabelSelectorOpNotIn, Values: []string{"hcloud-csi", "hcloud-csi-controller"}}}},
			EgressDeny: deny},
	}}
}

func TestMetadataPolicy(t *testing.T) {
	all := &metav1.LabelSelector{}
	cases := []struct {
		name      string
		kube      *fakeKube
		status    Status
		fragments []string
	}{
		{"in force", &fakeKube{cilium: goodCilium(), policies: []CiliumPolicy{shippedPolicy()}}, StatusPass,
			[]string{"a pod in namespace default: denied by ohmytalos-deny-metadata rule 1", "other than the CSI driver's: denied by ohmytalos-deny-metadata rule 2"}},
		{"one rule for every pod, k8s: keys and a wider CIDR", &fakeKube{cilium: goodCilium(), policies: []CiliumPolicy{{Name: "mine", Rules: []CiliumRule{
			{EndpointSelector: all, EgressDeny: []CIDRSet{{CIDR: "169.254.0.0/16"}}}}}}}, StatusPass, []string{"denied by mine rule 1"}},
		{"no policy kind served", &fakeKube{cilium: goodCilium()}, StatusFail,
			[]string{"no policy denies its egress to 169.254.169.254/32", "serves no CiliumClusterwideNetworkPolicy kind", "ohmytalos apply --only addons", "project-wide"}},
		{"policies, none for the metadata service", &fakeKube{cilium: goodCilium(), policies: []CiliumPolicy{{Name: "other", Rules: []CiliumRule{
			{EndpointSelector: all, EgressDeny: []CIDRSet{{CIDR: "10.0.0.0/8"}}}}}}}, StatusFail, []string{"a pod in namespace default: no policy"}},
		{"kube-system left open", &fakeKube{cilium: goodCilium(), policies: []CiliumPolicy{{Name: "half", Rules: shippedPolicy().Rules[:1]}}}, StatusFail,
			[]string{"not covered: a kube-system pod other than the CSI driver's"}},
		{"allow-list by label everywhere", &fakeKube{cilium: goodCilium(), policies: []CiliumPolicy{{Name: "lax", Rules: []CiliumRule{
			{EndpointSelector: &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{
				{Key: "k8s:app", Operator: metav1.LabelSelectorOpNotIn, Values: []string{"hcloud-csi"}}}}, EgressDeny: []CIDRSet{{CIDR: "169.254.169.254/32"}}}}}}}, StatusFail,
			[]string{"a pod outside kube-system labelled app=hcloud-csi: no policy"}},
		{"node rule only", &fakeKube{cilium: goodCilium(), policies: []CiliumPolicy{{Name: "nodes", Rules: []CiliumRule{
			{EgressDeny: []CIDRSet{{CIDR: "169.254.169.254/32"}}}}}}}, StatusFail, []string{"no policy denies"}},
		{"another CNI", &fakeKube{}, StatusSkip, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			env, _ := healthyCluster()
			env.Kube = c.kube
			expect(t, checkMetadataPolicy(context.Background(), env), c.status, c.fragments...)
		})
	}
	env, _ := healthyCluster()
	if r := checkMetadataPolicy(context.Background(), env); r.Status != StatusSkip {
		t.Errorf("without a kubeconfig: %s, want skip", r.Status)
	}
}

// allowListPolicy keeps every pod off the metadata service the other
// way: one egress rule allows 0.0.0.0/0 except the metadata address, and
// (enableDefaultDeny unset) puts the pods it selects into default deny.
func allowListPolicy(extra ...CiliumEgress) CiliumPolicy {
	egress := append([]CiliumEgress{{CIDRs: []CIDRSet{{CIDR: "0.0.0.0/0", Except: []string{"169.254.169.254/32"}}}}}, extra...)
	return CiliumPolicy{Name: "allow-but-metadata", Rules: []CiliumRule{{EndpointSelector: &metav1.LabelSelector{}, Egress: egress}}}
}

// TestMetadataPolicyEnforcement is issue 30's Medium 4 at the check:
// Cilium's policy enforcement switched off fails whatever the policies
// say (enable-policy never, policy-audit-mode); a policy the operator's
// validation refused is not in force, nor is an allow-list whose
// enableDefaultDeny.egress is false (Cilium has no enforcement mode per
// policy: these are the real per-policy ways it is off); a toCIDRSet
// excepting the metadata address keeps it out of an allow-list (pass)
// and out of a deny (fail); anything that may allow the address to a
// pod an allow-list holds fails.
func TestMetadataPolicyEnforcement(t *testing.T) {
	with := func(f func(*CiliumConfig)) *CiliumConfig { c := goodCilium(); f(c); return c }
	never := with(func(c *CiliumConfig) { c.PolicyEnforcement = "never" })
	refused := shippedPolicy()
	refused.Invalid = "unsupported key \"policyEnforcementMode\""
	no := false
	optedOut := allowListPolicy()
	optedOut.Rules[0].DefaultDenyEgress = &no
	denyExcept := CiliumPolicy{Name: "deny-link-local-but-metadata", Rules: []CiliumRule{{EndpointSelector: &metav1.LabelSelector{},
		EgressDeny: []CIDRSet{{CIDR: "169.254.0.0/16", Except: []string{"169.254.169.254/32"}}}}}}
	denyOtherExcept := CiliumPolicy{Name: "deny-link-local", Rules: []CiliumRule{{EndpointSelector: &metav1.LabelSelector{},
		EgressDeny: []CIDRSet{{CIDR: "169.254.0.0/16", Except: []string{"169.254.1.0/24"}}}}}}
	openNP := CiliumPolicy{Name: "NetworkPolicy allow-all", Namespace: "default", Rules: []CiliumRule{{EndpointSelector: &metav1.LabelSelector{},
		Egress: []CiliumEgress{{All: true}}}}}
	otherNS := openNP
	otherNS.Namespace = "team-a"
	cases := []struct {
		name      string
		kube      *fakeKube
		status    Status
		fragments []string
	}{
		{"global enforcement never", &fakeKube{cilium: never, policies: []CiliumPolicy{shippedPolicy()}}, StatusFail,
			[]string{"enable-policy is never", "enforces no policy", "policyEnforcementMode back to default", "whatever the policies say"}},
		{"global enforcement Never, as written in values", &fakeKube{cilium: with(func(c *CiliumConfig) { c.PolicyEnforcement = "Never" }), policies: []CiliumPolicy{shippedPolicy()}}, StatusFail,
			[]string{"enable-policy is never"}},
		{"policy audit mode", &fakeKube{cilium: with(func(c *CiliumConfig) { c.PolicyAuditMode = true }), policies: []CiliumPolicy{shippedPolicy()}}, StatusFail,
			[]string{"policy-audit-mode is true", "enforces none", "policyAuditMode"}},
		{"policy refused by Cilium's validation", &fakeKube{cilium: goodCilium(), policies: []CiliumPolicy{refused}}, StatusFail,
			[]string{"ohmytalos-deny-metadata is not in force: its status condition Valid is False (unsupported key", "a pod in namespace default: no policy denies"}},
		{"allow-list excepting the metadata address", &fakeKube{cilium: goodCilium(), policies: []CiliumPolicy{allowListPolicy()}}, StatusPass,
			[]string{"a pod in namespace default: in egress default deny (allow-but-metadata rule 1), and no egress rule selecting it allows 169.254.169.254"}},
		{"allow-list under enable-policy always", &fakeKube{cilium: with(func(c *CiliumConfig) { c.PolicyEnforcement = "always" }), policies: []CiliumPolicy{}}, StatusPass,
			[]string{"in egress default deny (enable-policy always)"}},
		{"allow-list opted out of default deny", &fakeKube{cilium: goodCilium(), policies: []CiliumPolicy{optedOut}}, StatusFail,
			[]string{"a pod in namespace default: no policy denies its egress"}},
		{"allow-list with a rule for every address on a port", &fakeKube{cilium: goodCilium(), policies: []CiliumPolicy{allowListPolicy(CiliumEgress{All: true})}}, StatusFail,
			[]string{"allow-but-metadata rule 1 egress rule 2 allows 169.254.169.254: it names no destination"}},
		{"allow-list with toEntities world", &fakeKube{cilium: goodCilium(), policies: []CiliumPolicy{allowListPolicy(CiliumEgress{Entities: []string{"cluster", "world"}})}}, StatusFail,
			[]string{"toEntities world holds it"}},
		{"allow-list with toFQDNs", &fakeKube{cilium: goodCilium(), policies: []CiliumPolicy{allowListPolicy(CiliumEgress{Other: []string{"toFQDNs"}})}}, StatusFail,
			[]string{"does not evaluate toFQDNs"}},
		{"allow-list with pod and host peers", &fakeKube{cilium: goodCilium(), policies: []CiliumPolicy{allowListPolicy(
			CiliumEgress{Entities: []string{"kube-apiserver", "host"}, Endpoints: []metav1.LabelSelector{{MatchLabels: map[string]string{"k8s:app": "db"}}}})}}, StatusPass, nil},
		{"allow-list with a toEndpoints selector the world identity matches", &fakeKube{cilium: goodCilium(), policies: []CiliumPolicy{allowListPolicy(
			CiliumEgress{Endpoints: []metav1.LabelSelector{{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "app", Operator: metav1.LabelSelectorOpNotIn, Values: []string{"x"}}}}}})}}, StatusFail,
			[]string{"also selects Cilium's world identity"}},
		{"allow-list widened by a NetworkPolicy in default", &fakeKube{cilium: goodCilium(), policies: []CiliumPolicy{allowListPolicy()}, nsPolicy: []CiliumPolicy{openNP}}, StatusFail,
			[]string{"not covered: a pod in namespace default", "default/NetworkPolicy allow-all rule 1 egress rule 1 allows"}},
		{"a NetworkPolicy in another namespace", &fakeKube{cilium: goodCilium(), policies: []CiliumPolicy{allowListPolicy()}, nsPolicy: []CiliumPolicy{otherNS}}, StatusPass, nil},
		{"deny set excepting the metadata address", &fakeKube{cilium: goodCilium(), policies: []CiliumPolicy{denyExcept}}, StatusFail,
			[]string{"a pod in namespace default: no policy denies"}},
		{"deny set excepting another range", &fakeKube{cilium: goodCilium(), policies: []CiliumPolicy{denyOtherExcept}}, StatusPass,
			[]string{"denied by deny-link-local rule 1"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			env, _ := healthyCluster()
			env.Kube = c.kube
			expect(t, checkMetadataPolicy(context.Background(), env), c.status, c.fragments...)
		})
	}
	// A deny is enough: the namespaced policies are read only for an allow-list.
	k := &fakeKube{cilium: goodCilium(), policies: []CiliumPolicy{shippedPolicy()}}
	env, _ := healthyCluster()
	env.Kube = k
	expect(t, checkMetadataPolicy(context.Background(), env), StatusPass)
	if k.nsReads != 0 {
		t.Errorf("NamespacedPolicies read %d times with the shipped deny policy, want 0", k.nsReads)
	}
}
