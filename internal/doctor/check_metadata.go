package doctor

import (
	"context"
	"fmt"
	"net/netip"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/ohmytalos/ohmytalos/internal/addons"
)

// metadataAddr is the Hetzner metadata service, which serves a server's
// user_data: the Talos machine config, root of trust of the cluster.
var metadataAddr = netip.MustParseAddr("169.254.169.254")

// metadataProbe is a pod a policy must keep off the metadata service.
type metadataProbe struct {
	what   string
	labels map[string]string
}

// metadataProbes are the pods the check asks about: any namespace, any
// kube-system pod but the CSI driver's, and a pod outside kube-system
// wearing the CSI driver's label (the allow-list holds in kube-system only).
var metadataProbes = []metadataProbe{
	{"a pod in namespace default", map[string]string{"io.kubernetes.pod.namespace": "default"}},
	{"a pod in a new namespace", map[string]string{"io.kubernetes.pod.namespace": "doctor-probe"}},
	{"a kube-system pod other than the CSI driver's", map[string]string{"io.kubernetes.pod.namespace": "kube-system", "app": "doctor-probe"}},
	{"a pod outside kube-system labelled app=hcloud-csi", map[string]string{"io.kubernetes.pod.namespace": "doctor-probe", "app": "hcloud-csi"}},
}

// checkMetadataPolicy verifies that Cilium keeps every pod but the
// allow-listed ones off the metadata service: its agent enforces policies
// (enable-policy is not never, policy-audit-mode is off), and for each
// probe pod a valid policy denies the address (egressDeny), or the pod is
// in egress default deny and no egress rule selecting it allows the
// address (an allow-list, such as toCIDRSet 0.0.0.0/0 except it).
//
// Cilium's facts, read in cilium/cilium and docs.cilium.io:
//   - the enforcement mode is the agent's, not a policy's: the Helm value
//     policyEnforcementMode renders cilium-config enable-policy, one of
//     default, always and never; "With never mode, policy enforcement is
//     disabled on all endpoints, even if rules do select specific
//     endpoints" (security/policy/intro, Policy Enforcement Modes). A
//     policy has no enforcement mode of its own; its enableDefaultDeny
//     (pkg/policy/api/rule.go DefaultDenyConfig) only says whether it puts
//     the pods it selects into default deny.
//   - policy-audit-mode=true: "no network policy is enforced"
//     (observability/policy-verdicts, Policy Audit Mode).
//   - a policy the operator's validation refuses carries the status
//     condition Valid=False (cilium_api_v2.PolicyConditionValid) and is
//     not in force.
//   - toCIDRSet except: "a list of IP blocks which the endpoint subject to
//     the rule is not allowed to initiate connections to" (pkg/policy/api
//     cidr.go CIDRRule.ExceptCIDRs; ComputeResultantCIDRSet removes them
//     from the cidr). So an egress (allow) set that excepts the metadata
//     address leaves it out, and an egressDeny set that excepts it does
//     not deny it.
func checkMetadataPolicy(ctx context.Context, env *Env) Result {
	cfg, r, ok := fetch(ctx, env.Kube, noKube, KubeSource.CiliumConfig, "Cilium's configuration from the cluster")
	if !ok {
		return r
	}
	if cfg == nil {
		return skip("Cilium is not the CNI (no kube-system/cilium DaemonSet): deny pod egress to " + addons.MetadataCIDR + " with your CNI's own policy")
	}
	mode := strings.ToLower(strings.TrimSpace(cfg.PolicyEnforcement))
	if mode == "" {
		mode = "default"
	}
	switch {
	case mode == "never":
		return metadataOff("cilium-config enable-policy is never: the Cilium agent enforces no policy, so no policy keeps pods off the metadata service",
			"set the Helm value policyEnforcementMode back to default (addons.cilium.values) and run `ohmytalos apply --only addons`; check with kubectl -n kube-system get cm cilium-config -o jsonpath='{.data.enable-policy}'")
	case mode != "default" && mode != "always":
		return metadataOff(fmt.Sprintf("cilium-config enable-policy is %q, not one of default, always, never: the agent does not start with it", cfg.PolicyEnforcement),
			"set the Helm value policyEnforcementMode to default (addons.cilium.values) and run `ohmytalos apply --only addons`")
	case cfg.PolicyAuditMode:
		return metadataOff("cilium-config policy-audit-mode is true: the Cilium agent logs policy verdicts and enforces none, so pods reach the metadata service",
			"remove the Helm value policyAuditMode (addons.cilium.values) and run `ohmytalos apply --only addons`")
	}
	policies, err := env.Kube.CiliumClusterwidePolicies(ctx)
	if err != nil {
		return sourceError("CiliumClusterwideNetworkPolicies", err)
	}
	served := policies != nil
	var namespaced []CiliumPolicy
	loadedNamespaced := false
	evidence := []string{"cilium-config enable-policy: " + mode}
	for _, p := range policies {
		if p.Invalid != "" {
			evidence = append(evidence, fmt.Sprintf("%s is not in force: its status condition Valid is False (%s)", p.Name, p.Invalid))
		}
	}
	var open []string
	for _, probe := range metadataProbes {
		v := metadataVerdictFor(policies, mode == "always", probe.labels)
		if v.allowList && !loadedNamespaced {
			// An allow-list keeps a pod off only if no other policy
			// selecting it allows the address: read the namespaced ones.
			if namespaced, err = env.Kube.NamespacedPolicies(ctx); err != nil {
				return sourceError("CiliumNetworkPolicies and NetworkPolicies", err)
			}
			loadedNamespaced = true
		}
		if v.allowList {
			v = metadataVerdictFor(append(append([]CiliumPolicy{}, policies...), namespaced...), mode == "always", probe.labels)
		}
		if v.open != "" {
			open = append(open, probe.what)
			evidence = append(evidence, probe.what+": "+v.open)
			continue
		}
		evidence = append(evidence, probe.what+": "+v.by)
	}
	if !served {
		evidence = append(evidence, "the cluster serves no CiliumClusterwideNetworkPolicy kind (the cilium-operator registers it when it runs)")
	}
	if len(open) == 0 {
		return pass(evidence...)
	}
	return Result{Status: StatusFail, Evidence: evidence,
		Explanation: metadataRisk + "; not covered: " + strings.Join(open, "; "),
		Fix: fmt.Sprintf("run `ohmytalos apply --only addons`: it installs the CiliumClusterwideNetworkPolicy %s, which denies pod egress to %s "+
			"(kubectl get ccnp %s -o yaml to see it); check that the cilium-operator runs, it registers the policy's CRD", addons.MetadataPolicyName, addons.MetadataCIDR, addons.MetadataPolicyName),
	}
}

// metadataRisk is what a pod reading the metadata service gets.
var metadataRisk = "pods can reach the Hetzner metadata service (" + metadataAddr.String() + "), which serves every server's user_data: the Talos machine config with the cluster CA keys, " +
	"the Hetzner token of the VIP document (project-wide, read and write), the Tailscale key and the disk passphrase"

// metadataOff fails the check because Cilium enforces no policy at all.
func metadataOff(why, fix string) Result {
	return Result{Status: StatusFail, Evidence: []string{why}, Explanation: metadataRisk + ", whatever the policies say", Fix: fix}
}

// metadataVerdict is how one pod stands: kept off by (by), or open
// (open says why). allowList is set when only an allow-list keeps it off.
type metadataVerdict struct {
	by, open  string
	allowList bool
}

// selectingRule is a rule of a policy in force that selects the pod.
type selectingRule struct {
	name string
	rule CiliumRule
}

// metadataVerdictFor judges a pod with these labels against the policies
// in force (always: enable-policy always, every pod in default deny).
func metadataVerdictFor(policies []CiliumPolicy, always bool, podLabels map[string]string) metadataVerdict {
	var selecting []selectingRule
	for _, p := range policies {
		if p.Invalid != "" || (p.Namespace != "" && podLabels[namespaceLabelKey] != p.Namespace) {
			continue
		}
		for i, r := range p.Rules {
			if r.EndpointSelector == nil || !selectsEndpoint(*r.EndpointSelector, podLabels) {
				continue
			}
			name := fmt.Sprintf("%s rule %d", p.Name, i+1)
			if p.Namespace != "" {
				name = p.Namespace + "/" + name
			}
			if cidrSetsHold(r.EgressDeny, metadataAddr) {
				return metadataVerdict{by: "denied by " + name}
			}
			selecting = append(selecting, selectingRule{name, r})
		}
	}
	deny := ""
	if always {
		deny = "enable-policy always"
	}
	for _, s := range selecting {
		if deny == "" && defaultDeniesEgress(s.rule) {
			deny = s.name
		}
	}
	if deny == "" {
		return metadataVerdict{open: "no policy denies its egress to " + addons.MetadataCIDR}
	}
	for _, s := range selecting {
		for j, e := range s.rule.Egress {
			if why := admitsMetadata(e); why != "" {
				return metadataVerdict{open: fmt.Sprintf("in egress default deny (%s), but %s egress rule %d allows %s: %s", deny, s.name, j+1, metadataAddr, why), allowList: true}
			}
		}
	}
	return metadataVerdict{by: fmt.Sprintf("in egress default deny (%s), and no egress rule selecting it allows %s", deny, metadataAddr), allowList: true}
}

// namespaceLabelKey is the label Cilium gives a pod endpoint with its
// namespace.
const namespaceLabelKey = "io.kubernetes.pod.namespace"

// defaultDeniesEgress reports whether a rule puts the pods it selects
// into egress default deny: enableDefaultDeny.egress true, or not set
// with egress rules (Cilium's default: true for each direction that has
// rules). Deny-only rules with it unset are not counted (Cilium before
// 1.16 left those pods in default allow).
func defaultDeniesEgress(r CiliumRule) bool {
	if r.DefaultDenyEgress != nil {
		return *r.DefaultDenyEgress
	}
	return len(r.Egress) > 0
}

// worldEntities are the Cilium entities that hold addresses outside the
// cluster, the metadata service's among them; entities known to hold
// cluster addresses only are the others of knownEntities.
var worldEntities = map[string]bool{"world": true, "world-ipv4": true, "all": true}

var knownEntities = map[string]bool{"host": true, "remote-node": true, "cluster": true, "kube-apiserver": true,
	"health": true, "init": true, "ingress": true, "unmanaged": true, "none": true, "world-ipv6": true}

// admitsMetadata says why an egress allow rule may allow the metadata
// address ("" when it cannot): any destination it does not evaluate counts
// as allowing it.
func admitsMetadata(e CiliumEgress) string {
	switch {
	case e.All:
		return "it names no destination (toPorts only, or none), so it allows every address"
	case len(e.Other) > 0:
		return "the doctor does not evaluate " + strings.Join(e.Other, ", ") + ", which may allow it"
	}
	for _, c := range e.CIDRs {
		if c.holds(metadataAddr) {
			return "its CIDR " + c.String() + " holds it"
		}
	}
	for _, en := range e.Entities {
		en = strings.ToLower(en)
		if worldEntities[en] {
			return "toEntities " + en + " holds it"
		}
		if !knownEntities[en] {
			return "toEntities " + en + " is not one the doctor knows"
		}
	}
	for _, sel := range e.Endpoints {
		if !selectsPodsOnly(sel) {
			return "a toEndpoints selector that requires no Kubernetes label also selects Cilium's world identity"
		}
	}
	return ""
}

// selectsPodsOnly reports whether a toEndpoints selector requires a
// Kubernetes label (a plain or k8s: key, by matchLabels, In or Exists),
// which the world identity (labels reserved:world and cidr:...) lacks.
func selectsPodsOnly(sel metav1.LabelSelector) bool {
	k8sKey := func(k string) bool {
		return !strings.Contains(k, ":") || strings.HasPrefix(k, "k8s:")
	}
	for k := range sel.MatchLabels {
		if k8sKey(k) {
			return true
		}
	}
	for _, e := range sel.MatchExpressions {
		if k8sKey(e.Key) && (e.Operator == metav1.LabelSelectorOpIn || e.Operator == metav1.LabelSelectorOpExists) {
			return true
		}
	}
	return false
}

// holds reports whether the set holds a: its CIDR holds it and none of
// its excepts does. A CIDR that does not parse holds nothing.
func (c CIDRSet) holds(a netip.Addr) bool {
	p, err := netip.ParsePrefix(strings.TrimSpace(c.CIDR))
	if err != nil || !p.Contains(a) {
		return false
	}
	for _, x := range c.Except {
		if xp, err := netip.ParsePrefix(strings.TrimSpace(x)); err == nil && xp.Contains(a) {
			return false
		}
	}
	return true
}

// String is the set as Cilium writes it: cidr, then -[except,...].
func (c CIDRSet) String() string {
	if len(c.Except) == 0 {
		return c.CIDR
	}
	return c.CIDR + " except " + strings.Join(c.Except, ", ")
}

// cidrSetsHold reports whether one of the sets holds a.
func cidrSetsHold(sets []CIDRSet, a netip.Addr) bool {
	for _, s := range sets {
		if s.holds(a) {
			return true
		}
	}
	return false
}

// selectsEndpoint evaluates a Cilium endpoint selector on a pod's labels.
// Cilium keys may carry a source prefix ("k8s:", "any:"), which the pod's
// Kubernetes labels match either way; an empty selector selects all.
func selectsEndpoint(sel metav1.LabelSelector, podLabels map[string]string) bool {
	plain := metav1.LabelSelector{MatchLabels: map[string]string{}}
	for k, v := range sel.MatchLabels {
		plain.MatchLabels[stripSource(k)] = v
	}
	for _, e := range sel.MatchExpressions {
		e.Key = stripSource(e.Key)
		plain.MatchExpressions = append(plain.MatchExpressions, e)
	}
	s, err := metav1.LabelSelectorAsSelector(&plain)
	if err != nil {
		return false
	}
	return s.Matches(labels.Set(podLabels))
}

func stripSource(key string) string {
	for _, src := range []string{"k8s:", "any:"} {
		if k, ok := strings.CutPrefix(key, src); ok {
			return k
		}
	}
	return key
}
