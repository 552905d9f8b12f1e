package addons

import (
	"fmt"
	"strconv"

	"github.com/ohmytalos/ohmytalos/internal/spec"
)

// Add-on names: the value of the ohmytalos.io/addon label and the file
// name under talos-config's manifests/ folder.
const (
	HCloudSecret  = "hcloud-secret"
	Cilium        = "cilium"
	HCloudCCM     = "hcloud-ccm"
	HCloudCSI     = "hcloud-csi"
	Longhorn      = "longhorn"
	MetricsServer = "metrics-server"
)

// Names lists every add-on in install order: the Secret first (the cloud
// controller and CSI driver read it), Cilium before anything that needs pod
// networking, the cloud controller before workloads that wait for
// initialised nodes.
func Names() []string {
	return []string{HCloudSecret, Cilium, HCloudCCM, HCloudCSI, Longhorn, MetricsServer, ingressAddon, Backup}
}

// Inputs are the facts known only at apply time.
type Inputs struct {
	// NetworkID is the Hetzner network's ID (0 when it does not exist yet).
	NetworkID int64
	// Token is the Hetzner API token the cloud controller and CSI driver
	// use; it goes into the kube-system/hcloud Secret only.
	Token string
	// Backup are the backup add-on's recipient and S3 credentials.
	Backup BackupInputs
	// ClusterID is the cluster's random ID ("" before it has one): the
	// CSI driver labels the volumes it creates with it, so destroy tells
	// this cluster's volumes from those of another of the same name.
	ClusterID string
	// IngressLBIPv6 is the ingress load balancer's public IPv6 ("" while
	// it does not exist or has none): Traefik serves IPv6 only with it
	// (IngressIPv6).
	IngressLBIPv6 string
}

// Workload is a Deployment or DaemonSet whose readiness means the add-on
// works.
type Workload struct {
	Kind, Namespace, Name string
}

// Addon is one add-on's rendered objects.
type Addon struct {
	// Name is the add-on's name (Names).
	Name string
	// Version is the pinned release ("" for the Secret).
	Version string
	// Objects are the objects to apply, in order.
	Objects []Object
	// Workloads must be ready for the add-on to count as installed.
	Workloads []Workload
}

// Enabled reports, for every add-on name, whether the spec switches it on.
// The Secret is on when the cloud controller or the CSI driver is.
func Enabled(sp *spec.Spec) map[string]bool {
	a := sp.Addons
	return map[string]bool{
		HCloudSecret:  a.HCloudCCM.On() || a.HCloudCSI.On(),
		Cilium:        a.Cilium.On(),
		HCloudCCM:     a.HCloudCCM.On(),
		HCloudCSI:     a.HCloudCSI.On(),
		Longhorn:      a.Longhorn.On() && sp.HasStoragePool(),
		MetricsServer: a.MetricsServer.On(),
		ingressAddon:  a.Ingress.On(),
		Backup:        a.Backup.On(),
	}
}

// Render returns the enabled add-ons of a defaulted spec, in install order,
// every object labelled with the managed-by and add-on labels.
func Render(sp *spec.Spec, in Inputs) ([]Addon, error) {
	on := Enabled(sp)
	var out []Addon
	for _, name := range Names() {
		if !on[name] {
			continue
		}
		a, err := renderOne(sp, in, name)
		if err != nil {
			return nil, fmt.Errorf("render add-on %s: %w", name, err)
		}
		for _, o := range a.Objects {
			o.setLabels(map[string]string{LabelManagedBy: ManagedBy, LabelAddon: name})
		}
		out = append(out, a)
	}
	return out, nil
}

func renderOne(sp *spec.Spec, in Inputs, name string) (Addon, error) {
	switch name {
	case HCloudSecret:
		return Addon{Name: name, Objects: []Object{hcloudSecret(in)}}, nil
	case Cilium:
		return cilium(sp)
	case HCloudCCM:
		return hcloudCCM(sp), nil
	case HCloudCSI:
		return hcloudCSI(sp, in.ClusterID), nil
	case Longhorn:
		return longhorn(sp), nil
	case MetricsServer:
		return metricsServer(sp), nil
	case ingressAddon:
		return ingress(sp), nil
	case Backup:
		return talosBackup(sp, in.Backup), nil
	}
	return Addon{}, fmt.Errorf("no add-on %q", name)
}

// hcloudSecret is kube-system/hcloud: the token and the network, read by
// the cloud controller (HCLOUD_TOKEN, HCLOUD_NETWORK) and the CSI driver
// (HCLOUD_TOKEN), under the keys both upstream manifests use
// (hcloud-cloud-controller-manager deploy/ccm-networks.yaml,
// csi-driver deploy/kubernetes/hcloud-csi.yml).
func hcloudSecret(in Inputs) Object {
	data := m{"token": in.Token}
	if in.NetworkID != 0 {
		data["network"] = strconv.FormatInt(in.NetworkID, 10)
	}
	return newObject("v1", "Secret", "kube-system", "hcloud").with("type", "Opaque").with("stringData", data)
}

// nativeRouting reports whether pods are routed through Hetzner network
// routes (network.nativeRouting) rather than a VXLAN tunnel.
func nativeRouting(sp *spec.Spec) bool { return sp.Network.NativeRouting }

// controlPlaneReplicas is 2 for HA control planes, else 1.
func controlPlaneReplicas(sp *spec.Spec) int {
	if sp.ControlPlane.Count > 1 {
		return 2
	}
	return 1
}
