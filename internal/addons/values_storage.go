package addons

import (
	"github.com/ohmytalos/ohmytalos/internal/charts"
	"github.com/ohmytalos/ohmytalos/internal/spec"
)

// longhornDataPath is Longhorn's system disk on Talos: a folder of /var,
// the only writable place, mounted into the kubelet by the node configs.
const longhornDataPath = "/var/lib/longhorn"

// LonghornValues are the longhorn chart's values (keys: longhorn/longhorn
// v1.10.1 chart/values.yaml). The disks come from the node labels and
// annotations the Talos configs set (field notes: create-default-disk
// config, default-disks-config). The longhorn-system Namespace's
// privileged PodSecurity labels are no chart value: ohmytalos sets them on
// the Namespace before the release.
func LonghornValues(sp *spec.Spec, _ Inputs) []charts.Value {
	workers := workerCount(sp)
	return []charts.Value{
		need("defaultSettings.createDefaultDiskLabeledNodes", true, "disks only on the nodes the Talos configs label (node.longhorn.io/create-default-disk: config)"),
		need("defaultSettings.defaultDataPath", longhornDataPath, "the system disk under /var, the path the Talos configs mount into the kubelet"),
		need("persistence.defaultClass", false, "hcloud-volumes stays the default StorageClass"),
		set("persistence.defaultClassReplicaCount", upTo(workers, 3), "a replica per worker, up to three: more replicas than nodes leave every volume degraded"),
		set("longhornUI.replicas", upTo(workers, 2), "two UI pods when two workers can carry them"),
	}
}

// MetricsServerValues are the metrics-server chart's values (keys:
// kubernetes-sigs/metrics-server metrics-server-helm-chart-3.13.0
// charts/metrics-server/values.yaml: args are added after defaultArgs).
func MetricsServerValues(sp *spec.Spec, _ Inputs) []charts.Value {
	return []charts.Value{
		need("args", []any{"--kubelet-insecure-tls"}, "Talos' kubelets serve self-signed certificates, as Talos' metrics-server guide says"),
		set("replicas", controlPlaneReplicas(sp), "two replicas on an HA cluster, one otherwise"),
	}
}
