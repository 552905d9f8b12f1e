// Package talos generates the Talos machine configurations of an ohmytalos
// cluster on Hetzner Cloud: one secrets bundle per cluster, and from it, for
// every node group, a validated, comment-free multi-document machine config
// small enough for Hetzner's user_data, plus the operator's talosconfig.
//
// Everything is rendered with github.com/siderolabs/talos/pkg/machinery
// (generate.NewInput and the typed config documents), so the output is what
// `talosctl gen config` would produce for the same inputs, then adapted to the
// Hetzner layout described in docs/field-notes.md: CNI none and kube-proxy
// disabled (Cilium), external cloud provider (hcloud CCM), KubePrism, LUKS2
// volumes (STATE by nodeID, EPHEMERAL and the Longhorn volume by a static key
// locked to STATE), Longhorn node labels and annotations, the API VIP as an
// HCloudVIPConfig document and the Tailscale extension service on control
// planes.
//
// The package does no I/O: the caller stores the bundle (encrypted) and sends
// the rendered bytes as user_data or through the Talos API.
package talos

// UserDataLimit is Hetzner Cloud's cap on a server's user_data, in bytes.
// Render refuses a machine config larger than this: Hetzner would reject the
// server create request.
const UserDataLimit = 32 * 1024

// Role names accepted in NodeGroup.Role.
const (
	// RoleControlPlane is a control plane node group (etcd, API server, VIP).
	RoleControlPlane = "controlplane"
	// RoleWorker is a worker node pool.
	RoleWorker = "worker"
)

// Defaults applied when the corresponding input is empty; they follow the
// defaults in docs/field-notes.md.
const (
	// DefaultPodCIDR is the pod network when Cluster.PodCIDR is empty.
	DefaultPodCIDR = "10.42.0.0/16"
	// DefaultServiceCIDR is the service network when Cluster.ServiceCIDR is empty.
	DefaultServiceCIDR = "10.43.0.0/16"
	// InstallDisk is the system disk of every Hetzner Cloud server.
	InstallDisk = "/dev/sda"
	// KubePrismPort is the local API server proxy port on every node.
	KubePrismPort = 7445
	// APIServerPort is the Kubernetes API port behind the endpoint.
	APIServerPort = 6443
	// LonghornVolumeName is the UserVolumeConfig name of the attached
	// Hetzner volume; Talos mounts user volumes at /var/mnt/<name>.
	LonghornVolumeName = "longhorn"
	// LonghornVolumeMount is where Talos mounts the Longhorn user volume.
	LonghornVolumeMount = "/var/mnt/" + LonghornVolumeName
	// LonghornSystemDiskPath is the Longhorn data path on the system disk.
	LonghornSystemDiskPath = "/var/lib/longhorn"
	// RedactedValue replaces every secret in Redact's output.
	RedactedValue = "REDACTED"
)
