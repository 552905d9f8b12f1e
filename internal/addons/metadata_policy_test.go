package addons

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestMetadataPolicyRendered: the Cilium add-on ends with the policy
// keeping pods off the metadata service, every rule deny-only without
// default deny, the CSI driver allowed in kube-system only; and the policy
// waits for the operator's CRD.
func TestMetadataPolicyRendered(t *testing.T) {
	as, err := Render(testSpec(t, nil), Inputs{NetworkID: 1, Token: "t"})
	if err != nil {
		t.Fatal(err)
	}
	var cil Addon
	for _, a := range as {
		if a.Name == Cilium {
			cil = a
		}
	}
	last := cil.Objects[len(cil.Objects)-1]
	if last.Kind() != CiliumClusterwidePolicyKind || last.Name() != MetadataPolicyName {
		t.Fatalf("the Cilium add-on ends with %s, want the metadata policy after the operator", last.Ref())
	}
	if _, ok := RegisteredByOperator(last); !ok {
		t.Error("the policy is not marked as waiting for the operator's CRD")
	}
	if _, ok := RegisteredByOperator(find(t, as, "Deployment", "cilium-operator")); ok {
		t.Error("a Deployment marked as waiting for an operator's CRD")
	}
	rules, _ := last["specs"].(l)
	if len(rules) != 2 {
		t.Fatalf("%d rules, want 2", len(rules))
	}
	for i, r := range rules {
		b, _ := json.Marshal(r)
		for _, want := range []string{`"egressDeny":[{"toCIDR":["169.254.169.254/32"]}]`, `"enableDefaultDeny":{"egress":false,"ingress":false}`} {
			if !strings.Contains(string(b), want) {
				t.Errorf("rule %d = %s, lacks %s", i+1, b, want)
			}
		}
		if strings.Contains(string(b), `"egress":[`) || strings.Contains(string(b), `"ingress"`+":[") {
			t.Errorf("rule %d allows traffic: %s", i+1, b)
		}
	}
	if b, _ := json.Marshal(rules[1]); !strings.Contains(string(b), `"matchLabels":{"io.kubernetes.pod.namespace":"kube-system"}`) || !strings.Contains(string(b), "hcloud-csi") {
		t.Errorf("the CSI allow-list is not limited to kube-system: %s", b)
	}
	if got := dig(find(t, as, "ConfigMap", "cilium-config"), "data", "enable-non-default-deny-policies"); got != "true" {
		t.Errorf("enable-non-default-deny-policies = %v, want true (else enableDefaultDeny: false is ignored)", got)
	}
}
