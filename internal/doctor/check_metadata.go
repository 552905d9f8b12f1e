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

// checkMetadataPolicy verifies that a Cilium clusterwide policy denies pod
// egress to the metadata service for every pod but the allow-listed ones.
func checkMetadataPolicy(ctx context.Context, env *Env) Result {
	cfg, r, ok := fetch(ctx, env.Kube, noKube, KubeSource.CiliumConfig, "Cilium's configuration from the cluster")
	if !ok {
		return r
	}
	if cfg == nil {
		return skip("Cilium is not the CNI (no kube-system/cilium DaemonSet): deny pod egress to " + addons.MetadataCIDR + " with your CNI's own policy")
	}
	policies, err := env.Kube.CiliumClusterwidePolicies(ctx)
	if err != nil {
		return sourceError("CiliumClusterwideNetworkPolicies", err)
	}
	var evidence, open []string
	for _, p := range metadataProbes {
		by := metadataDeniedBy(policies, p.labels)
		if by == "" {
			open = append(open, p.what)
			evidence = append(evidence, p.what+": no policy denies its egress to "+addons.MetadataCIDR)
			continue
		}
		evidence = append(evidence, p.what+": denied by "+by)
	}
	if policies == nil {
		evidence = append(evidence, "the cluster serves no CiliumClusterwideNetworkPolicy kind (the cilium-operator registers it when it runs)")
	}
	if len(open) == 0 {
		return pass(evidence...)
	}
	return Result{Status: StatusFail, Evidence: evidence,
		Explanation: "pods can reach the Hetzner metadata service (" + metadataAddr.String() + "), which serves every server's user_data: the Talos machine config with the cluster CA keys, " +
			"the Hetzner token of the VIP document (project-wide, read and write), the Tailscale key and the disk passphrase; not covered: " + strings.Join(open, "; "),
		Fix: fmt.Sprintf("run `ohmytalos apply --only addons`: it installs the CiliumClusterwideNetworkPolicy %s, which denies pod egress to %s "+
			"(kubectl get ccnp %s -o yaml to see it); check that the cilium-operator runs, it registers the policy's CRD", addons.MetadataPolicyName, addons.MetadataCIDR, addons.MetadataPolicyName),
	}
}

// metadataDeniedBy names the policy rule that selects a pod with these
// labels and denies its egress to the metadata service ("" when none).
func metadataDeniedBy(policies []CiliumPolicy, podLabels map[string]string) string {
	for _, p := range policies {
		for i, r := range p.Rules {
			if r.EndpointSelector == nil || !deniesMetadata(r.EgressDenyCIDRs) {
				continue
			}
			if selectsEndpoint(*r.EndpointSelector, podLabels) {
				return fmt.Sprintf("%s rule %d", p.Name, i+1)
			}
		}
	}
	return ""
}

// deniesMetadata reports whether one of the CIDRs holds the metadata address.
func deniesMetadata(cidrs []string) bool {
	for _, c := range cidrs {
		if p, err := netip.ParsePrefix(strings.TrimSpace(c)); err == nil && p.Contains(metadataAddr) {
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
