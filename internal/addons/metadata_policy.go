package addons

// The metadata service of every Hetzner server answers at 169.254.169.254
// and serves the server's user_data: for ohmytalos that is the Talos
// machine config, with the cluster's CA keys, the Hetzner token of the VIP
// document, the Tailscale key and the disk passphrase. Pods must not read
// it, so the Cilium add-on installs a clusterwide policy denying pod
// egress to it.
//
// Who needs the metadata service (read in the upstream sources):
//   - hetznercloud/csi-driver cmd/node/main.go: the node plugin reads its
//     server ID and availability zone from it (metadata.NewClient
//     InstanceID, AvailabilityZone) and exits without them; it is not a
//     host-network pod, so the policy would apply to it.
//   - hetznercloud/csi-driver cmd/controller/main.go: the controller reads
//     its server from it unless HCLOUD_VOLUME_DEFAULT_LOCATION is set
//     (not set here); not a host-network pod either.
//   - hetznercloud/hcloud-cloud-controller-manager hcloud/cloud.go: the
//     cloud controller talks to the Hetzner API with HCLOUD_TOKEN, not to
//     the metadata service, and runs with hostNetwork (hcloud.go).
//   - Cilium's agent and operator run with hostNetwork.
//
// Cilium enforces endpoint policies on pod endpoints only: host-network
// pods are the host's identity and no endpointSelector selects them
// (docs.cilium.io security/policy/language, "Endpoints Based"), so the
// allow-list is the CSI driver's pods in kube-system, and only there: a pod
// elsewhere carrying the same label is still denied.

// MetadataPolicyName is the CiliumClusterwideNetworkPolicy that denies pod
// egress to the metadata service.
const MetadataPolicyName = "ohmytalos-deny-metadata"

// MetadataCIDR is the Hetzner metadata service's address as a CIDR.
const MetadataCIDR = "169.254.169.254/32"

// MetadataAllowedApps are the values of the app label of the kube-system
// pods that may still reach the metadata service: the CSI driver's node
// plugin and controller (hcloud.go).
var MetadataAllowedApps = []string{"hcloud-csi", "hcloud-csi-controller"}

// CiliumPolicyAPIVersion and CiliumClusterwidePolicyKind name the kind
// the policy is; its CRD is registered by the cilium-operator at start
// (cilium/cilium pkg/k8s/apis/cilium.io/client/cell.go RegisterCRDsCell,
// unless --skip-crd-creation), not by any manifest applied here.
const (
	CiliumPolicyAPIVersion      = "cilium.io/v2"
	CiliumClusterwidePolicyKind = "CiliumClusterwideNetworkPolicy"
)

// namespaceLabel is the label Cilium gives every pod endpoint with its
// namespace (selectable in clusterwide policies).
const namespaceLabel = "io.kubernetes.pod.namespace"

// metadataPolicy renders the CiliumClusterwideNetworkPolicy. Two rules:
// every pod outside kube-system, and every kube-system pod but the CSI
// driver's. Each only denies (egressDeny toCIDR) and sets
// enableDefaultDeny to false both ways: without it, a policy with egress
// rules, deny rules included, puts the endpoints it selects into default
// deny for egress (Cilium >= 1.16 pkg/policy/api Rule.Sanitize: a nil
// EnableDefaultDeny.Egress becomes len(Egress) > 0 || len(EgressDeny) > 0;
// docs.cilium.io security/policy/deny: "Pods will enter default-deny mode
// as soon a single policy selects it"), which would cut every pod off.
func metadataPolicy() Object {
	deny := l{m{"toCIDR": strs(MetadataCIDR)}}
	noDefaultDeny := m{"egress": false, "ingress": false}
	rules := l{
		m{
			"description": "pods outside kube-system never reach the Hetzner metadata service (it serves the Talos machine config)",
			"endpointSelector": m{"matchExpressions": l{
				m{"key": namespaceLabel, "operator": "NotIn", "values": strs("kube-system")},
			}},
			"egressDeny":        deny,
			"enableDefaultDeny": noDefaultDeny,
		},
		m{
			"description": "kube-system pods other than the Hetzner CSI driver's never reach the metadata service",
			"endpointSelector": m{
				"matchLabels":      m{namespaceLabel: "kube-system"},
				"matchExpressions": l{m{"key": "app", "operator": "NotIn", "values": strs(MetadataAllowedApps...)}},
			},
			"egressDeny":        deny,
			"enableDefaultDeny": noDefaultDeny,
		},
	}
	return newObject(CiliumPolicyAPIVersion, CiliumClusterwidePolicyKind, "", MetadataPolicyName).with("specs", rules)
}

// OperatorKind is a kind whose CRD an operator registers at run time.
type OperatorKind struct {
	APIVersion, Kind string
	// Operator names who registers it, and Check how to see why it does
	// not, for the message when the kind never comes.
	Operator, Check string
}

// RegisteredByOperator reports whether o's kind is served only once an
// operator of the add-ons has registered its CRD: applying it earlier
// fails with "no matches for kind", so it must wait.
func RegisteredByOperator(o Object) (OperatorKind, bool) {
	if o.APIVersion() == CiliumPolicyAPIVersion {
		return OperatorKind{APIVersion: o.APIVersion(), Kind: o.Kind(), Operator: "the cilium-operator Deployment (kube-system)",
			Check: "kubectl -n kube-system get deploy cilium-operator; kubectl -n kube-system logs deploy/cilium-operator"}, true
	}
	return OperatorKind{}, false
}
