package talos

import (
	"errors"
	"fmt"
	"net/netip"
	"strings"
)

// Cluster is the cluster-wide input of Render and Talosconfig. The lead
// adapts the spec into it; secret fields carry values, never references, and
// never appear in errors.
type Cluster struct {
	// Name is the Kubernetes cluster name (cluster.clusterName, talosconfig context).
	Name string
	// TalosVersion selects the machinery version contract, e.g. "v1.13.9".
	TalosVersion string
	// KubernetesVersion is e.g. "1.36.1"; a leading "v" is stripped.
	KubernetesVersion string
	// Endpoint is the host of cluster.controlPlane.endpoint
	// (https://Endpoint:6443): the VIP or the load balancer IP.
	Endpoint string
	// PodCIDR defaults to DefaultPodCIDR.
	PodCIDR string
	// ServiceCIDR defaults to DefaultServiceCIDR.
	ServiceCIDR string
	// NodeCIDR, when set, is the private network (e.g. 10.0.0.0/16): kubelet
	// picks its node IP from it and etcd advertises on it, so the cluster
	// talks over the private network even when nodes have a public IP.
	NodeCIDR string
	// VIP is the API VIP held by one control plane (HCloudVIPConfig); empty
	// means no VIP document (the endpoint is a load balancer).
	VIP string
	// VIPLink is the link the VIP is announced on. Empty means "eth1" when
	// servers have a public NIC, else "eth0": Talos' hcloud platform boots
	// with net.ifnames=0, eth0 public and eth1 private.
	VIPLink string
	// PublicIPv4 tells whether servers have a public NIC (default VIP link).
	PublicIPv4 bool
	// HCloudToken is the Hetzner API token Talos uses to move the VIP (secret).
	HCloudToken string
	// TailscaleAuthKey, when set, configures the Tailscale extension service
	// on control planes (secret).
	TailscaleAuthKey string
	// TailscaleRoutes are the subnets the control planes advertise to the
	// tailnet (TS_ROUTES), e.g. the private network, so an operator on the
	// tailnet reaches the VIP once the routes are approved.
	TailscaleRoutes []string
	// DiskPassphrase is the static LUKS2 key of EPHEMERAL and the Longhorn
	// volume, locked to STATE (secret).
	DiskPassphrase string
	// CertSANs are extra API server and Talos API certificate SANs.
	CertSANs []string
	// ScheduleOnControlPlanes lets ordinary workloads (the add-ons'
	// controllers among them) run on control planes: a cluster without
	// workers needs it, or every Deployment stays Pending behind the
	// node-role.kubernetes.io/control-plane:NoSchedule taint.
	ScheduleOnControlPlanes bool
	// TalosAPIAccessNamespaces are the Kubernetes namespaces whose pods may
	// take etcd snapshots over the Talos API (kubernetesTalosAPIAccess with
	// os:etcd:backup, control planes only); empty leaves the feature off.
	TalosAPIAccessNamespaces []string
}

// NodeGroup is one control plane group or worker pool: every node of a group
// gets the same machine config.
type NodeGroup struct {
	// Role is RoleControlPlane or RoleWorker.
	Role string
	// Pool is the pool name (informational; echoed in Rendered).
	Pool string
	// Installer is the installer image for upgrades,
	// factory.talos.dev/hcloud-installer/ID:VERSION.
	Installer string
	// Labels are extra node labels; they override the Longhorn defaults.
	Labels map[string]string
	// Taints are "key=value:Effect" or "key:Effect".
	Taints []string
	// VolumeSizeGB is the size of the attached Hetzner volume; > 0 adds the
	// encrypted Longhorn user volume.
	VolumeSizeGB int
	// Storage marks a storage pool (Longhorn volume disk, excluded from the
	// public load balancer).
	Storage bool
	// LoadBalancer marks a pool attached to the public load balancer.
	LoadBalancer bool
	// Patches are the operator's machine-config patches, applied in order
	// after ohmytalos's own documents.
	Patches []Patch
}

// Rendered is one group's machine config.
type Rendered struct {
	// Role and Pool echo the NodeGroup.
	Role, Pool string
	// Config is the multi-document YAML, encoded without comments.
	Config []byte
	// Size is len(Config); it never exceeds UserDataLimit.
	Size int
	// Warnings are the non-fatal findings of Talos' validation.
	Warnings []string
	// PatchWarnings name the patches that change a setting ohmytalos
	// depends on, and the setting.
	PatchWarnings []string
}

// normalized holds a Cluster after defaults and checks.
type normalized struct {
	Cluster

	endpointURL string
	vipLink     string
}

// normalize applies defaults and checks the cluster input; errors name the
// field and never contain a secret value.
func (c Cluster) normalize() (normalized, error) {
	n := normalized{Cluster: c}

	var errs []error

	if strings.TrimSpace(c.Name) == "" {
		errs = append(errs, errors.New("cluster name is empty: set the cluster name"))
	}

	n.KubernetesVersion = strings.TrimPrefix(strings.TrimSpace(c.KubernetesVersion), "v")
	if n.KubernetesVersion == "" {
		errs = append(errs, errors.New("kubernetes version is empty: set it, e.g. 1.36.1"))
	}

	if c.Endpoint == "" {
		errs = append(errs, errors.New("endpoint is empty: set the VIP or load balancer IP the API is reached on"))
	} else if strings.Contains(c.Endpoint, "/") || (strings.Contains(c.Endpoint, ":") && !isIP(c.Endpoint)) {
		errs = append(errs, fmt.Errorf("endpoint %q must be a bare host or IP (the port %d and https:// are added)", c.Endpoint, APIServerPort))
	} else {
		n.endpointURL = "https://" + joinHostPort(c.Endpoint, APIServerPort)
	}

	if n.PodCIDR == "" {
		n.PodCIDR = DefaultPodCIDR
	}

	if n.ServiceCIDR == "" {
		n.ServiceCIDR = DefaultServiceCIDR
	}

	for _, f := range []struct{ name, value string }{{"pod CIDR", n.PodCIDR}, {"service CIDR", n.ServiceCIDR}, {"node CIDR", n.NodeCIDR}} {
		if f.value == "" {
			continue
		}

		if _, err := netip.ParsePrefix(f.value); err != nil {
			errs = append(errs, fmt.Errorf("%s %q is not a CIDR like 10.42.0.0/16: %w", f.name, f.value, err))
		}
	}

	n.vipLink = c.VIPLink
	if n.vipLink == "" {
		n.vipLink = defaultVIPLink(c.PublicIPv4)
	}

	if c.VIP != "" {
		if !isIP(c.VIP) {
			errs = append(errs, fmt.Errorf("VIP %q is not an IP address: set an address of the control plane subnet", c.VIP))
		}

		if c.HCloudToken == "" {
			errs = append(errs, errors.New("the Hetzner API token is empty but a VIP is set: Talos needs the token to move the VIP between control planes"))
		}
	}

	if c.DiskPassphrase == "" {
		errs = append(errs, errors.New("the disk encryption passphrase is empty: EPHEMERAL and the Longhorn volume need a static key"))
	}

	return n, errors.Join(errs...)
}

// defaultVIPLink is the private NIC's name on Talos' hcloud platform
// (net.ifnames=0): eth1 behind a public eth0, eth0 on private-only servers.
func defaultVIPLink(publicIPv4 bool) string {
	if publicIPv4 {
		return "eth1"
	}

	return "eth0"
}

func isIP(s string) bool {
	_, err := netip.ParseAddr(s)

	return err == nil
}

func joinHostPort(host string, port int) string {
	if addr, err := netip.ParseAddr(host); err == nil && addr.Is6() {
		return fmt.Sprintf("[%s]:%d", host, port)
	}

	return fmt.Sprintf("%s:%d", host, port)
}

// check validates a node group's own fields.
func (g NodeGroup) check() error {
	var errs []error

	if g.Role != RoleControlPlane && g.Role != RoleWorker {
		errs = append(errs, fmt.Errorf("pool %q: role %q is neither %q nor %q", g.Pool, g.Role, RoleControlPlane, RoleWorker))
	}

	if g.Installer == "" {
		errs = append(errs, fmt.Errorf("pool %q: installer image is empty: set factory.talos.dev/hcloud-installer/SCHEMATIC:VERSION", g.Pool))
	}

	if g.VolumeSizeGB < 0 {
		errs = append(errs, fmt.Errorf("pool %q: volume size %d GB is negative", g.Pool, g.VolumeSizeGB))
	}

	if g.Storage && g.LoadBalancer {
		errs = append(errs, fmt.Errorf("pool %q: a storage pool is excluded from external load balancers, so it cannot also be a load balancer target; pick one", g.Pool))
	}

	return errors.Join(errs...)
}
