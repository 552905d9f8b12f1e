package addons

import (
	"github.com/ohmytalos/ohmytalos/internal/charts"
	"github.com/ohmytalos/ohmytalos/internal/cloud"
	"github.com/ohmytalos/ohmytalos/internal/spec"
)

// secretName is the kube-system Secret holding the token and the network
// ID (hcloudSecret): the charts reference it, never the token itself.
const secretName = "hcloud"

// envValue and envSecret are entries of the cloud controller chart's env
// map (NAME -> {value} or {valueFrom}).
func envValue(v string) map[string]any { return map[string]any{"value": v} }

func envSecret(key string) map[string]any {
	return map[string]any{"valueFrom": map[string]any{"secretKeyRef": map[string]any{"name": secretName, "key": key}}}
}

// HCloudCCMValues are the hcloud-cloud-controller-manager chart's values
// (keys: hetznercloud/hcloud-cloud-controller-manager v1.35.0
// chart/values.yaml and templates/deployment.yaml; env names:
// internal/config/config.go and load_balancer_envs.go). networking.enabled
// makes the chart run on the host network, pass --allocate-node-cidrs and
// --cluster-cidr, and read HCLOUD_NETWORK from Secret hcloud key network.
func HCloudCCMValues(sp *spec.Spec, _ Inputs) []charts.Value {
	routes := "false"
	if nativeRouting(sp) {
		routes = "true"
	}
	out := []charts.Value{
		need("env.HCLOUD_TOKEN", envSecret("token"), "the API token, read from Secret kube-system/hcloud (never a value)"),
		need("networking.enabled", true, "load balancers reach the nodes over the private network, and routes live in it (HCLOUD_NETWORK from Secret hcloud key network)"),
		need("networking.clusterCIDR", sp.Network.Pods, "the pod range (network.pods): the chart passes it as --cluster-cidr"),
		need("env.HCLOUD_NETWORK_ROUTES_ENABLED", envValue(routes), "network routes per node's pod range only with network.nativeRouting"),
		set("env.ROBOT_ENABLED", envValue("false"), "no Robot (dedicated) servers in the cluster"),
		need("env.HCLOUD_LOAD_BALANCERS_LOCATION", envValue(sp.LoadBalancer.Location), "without a location the controller refuses every LoadBalancer Service that lacks the annotation (field notes: Service stays <pending>)"),
		need("env.HCLOUD_LOAD_BALANCERS_USE_PRIVATE_IP", envValue("true"), "targets by private IP: the firewall drops the nodes' public addresses"),
		need("env.KUBERNETES_SERVICE_HOST", envValue(kubePrismHost), "KubePrism: the controller runs on the host network, before any CNI"),
		need("env.KUBERNETES_SERVICE_PORT", envValue(kubePrismPort), "KubePrism's port on Talos"),
		set("replicaCount", 1, "one controller; the chart turns leader election off for one replica"),
		// The chart tolerates the control planes' taint; without a selector
		// the scheduler may put the one replica on a worker.
		set("nodeSelector", map[string]any{"node-role.kubernetes.io/control-plane": ""}, "on the control planes: on a worker, losing that worker leaves the cluster without its cloud controller, and that worker's Node is not deleted until the pod is evicted, five minutes later"),
	}
	if !nativeRouting(sp) {
		// The chart sets --allocate-node-cidrs=true with networking; the
		// route controller then runs unless told not to (kubernetes/
		// cloud-provider app/core.go startRouteController). A string: the
		// chart writes --KEY=VALUE only for a non-empty value.
		out = append(out, need("args.configure-cloud-routes", "false", "no route controller without network.nativeRouting: the tunnel carries pod traffic"))
	}
	return out
}

// HCloudCSIValues are the hcloud-csi chart's values (keys:
// hetznercloud/csi-driver v2.22.1 chart/values.yaml and
// templates/controller/deployment.yaml: volumeExtraLabels becomes
// HCLOUD_VOLUME_EXTRA_LABELS).
func HCloudCSIValues(sp *spec.Spec, in Inputs) []charts.Value {
	labels := map[string]any{cloud.LabelCluster: sp.Name}
	if in.ClusterID != "" {
		labels[cloud.LabelClusterID] = in.ClusterID
	}
	return []charts.Value{
		need("controller.hcloudToken.existingSecret.name", secretName, "the token stays in Secret kube-system/hcloud (never a value)"),
		need("controller.hcloudToken.existingSecret.key", "token", "the Secret's key holding the token"),
		need("controller.volumeExtraLabels", labels, "every volume carries the cluster's label and ID, so destroy finds the volumes claims left and no other cluster's"),
		set("storageClasses", []any{map[string]any{"name": "hcloud-volumes", "defaultStorageClass": true, "reclaimPolicy": "Delete"}},
			"hcloud-volumes is the cluster's default StorageClass (Longhorn's is not)"),
	}
}
