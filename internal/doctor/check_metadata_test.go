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
	deny := []string{"169.254.169.254/32"}
	return CiliumPolicy{Name: "ohmytalos-deny-metadata", Rules: []CiliumRule{
		{EndpointSelector: &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{
			{Key: "io.kubernetes.pod.namespace", Operator: metav1.LabelSelectorOpNotIn, Values: []string{"kube-system"}}}},
			EgressDenyCIDRs: deny},
		{EndpointSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"io.kubernetes.pod.namespace": "kube-system"},
			MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "app", Operator: metav1.LabelSelectorOpNotIn, Values: []string{"hcloud-csi", "hcloud-csi-controller"}}}},
			EgressDenyCIDRs: deny},
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
			{EndpointSelector: all, EgressDenyCIDRs: []string{"169.254.0.0/16"}}}}}}, StatusPass, []string{"denied by mine rule 1"}},
		{"no policy kind served", &fakeKube{cilium: goodCilium()}, StatusFail,
			[]string{"no policy denies its egress to 169.254.169.254/32", "serves no CiliumClusterwideNetworkPolicy kind", "ohmytalos apply --only addons", "project-wide"}},
		{"policies, none for the metadata service", &fakeKube{cilium: goodCilium(), policies: []CiliumPolicy{{Name: "other", Rules: []CiliumRule{
			{EndpointSelector: all, EgressDenyCIDRs: []string{"10.0.0.0/8"}}}}}}, StatusFail, []string{"a pod in namespace default: no policy"}},
		{"kube-system left open", &fakeKube{cilium: goodCilium(), policies: []CiliumPolicy{{Name: "half", Rules: shippedPolicy().Rules[:1]}}}, StatusFail,
			[]string{"not covered: a kube-system pod other than the CSI driver's"}},
		{"allow-list by label everywhere", &fakeKube{cilium: goodCilium(), policies: []CiliumPolicy{{Name: "lax", Rules: []CiliumRule{
			{EndpointSelector: &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{
				{Key: "k8s:app", Operator: metav1.LabelSelectorOpNotIn, Values: []string{"hcloud-csi"}}}}, EgressDenyCIDRs: []string{"169.254.169.254/32"}}}}}}, StatusFail,
			[]string{"a pod outside kube-system labelled app=hcloud-csi: no policy"}},
		{"node rule only", &fakeKube{cilium: goodCilium(), policies: []CiliumPolicy{{Name: "nodes", Rules: []CiliumRule{
			{EgressDenyCIDRs: []string{"169.254.169.254/32"}}}}}}, StatusFail, []string{"no policy denies"}},
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
