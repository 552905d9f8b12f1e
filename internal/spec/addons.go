package spec

import (
	"fmt"
	"regexp"

	"github.com/ohmytalos/ohmytalos/internal/charts"
)

// Pinned add-on versions: the releases ohmytalos renders and tests. Each is
// overridable per cluster under addons.NAME.version.
const (
	// DefaultCiliumVersion is the Cilium release (quay.io/cilium/cilium).
	DefaultCiliumVersion = "v1.19.6"
	// DefaultHCloudCCMVersion is the Hetzner cloud controller manager release
	// (docker.io/hetznercloud/hcloud-cloud-controller-manager).
	DefaultHCloudCCMVersion = "v1.35.0"
	// DefaultHCloudCSIVersion is the Hetzner CSI driver release
	// (docker.io/hetznercloud/hcloud-csi-driver).
	DefaultHCloudCSIVersion = "v2.22.1"
	// DefaultLonghornVersion is the Longhorn release (docker.io/longhornio).
	DefaultLonghornVersion = "v1.10.1"
	// DefaultMetricsServerVersion is the metrics-server release
	// (registry.k8s.io/metrics-server/metrics-server).
	DefaultMetricsServerVersion = "v0.8.0"
)

// Addons are the in-cluster components ohmytalos installs once the
// Kubernetes API answers (see docs/addons.md).
type Addons struct {
	Cilium        Addon  `yaml:"cilium"`
	HCloudCCM     Addon  `yaml:"hcloudCCM"`
	HCloudCSI     Addon  `yaml:"hcloudCSI"`
	Longhorn      Addon  `yaml:"longhorn"`
	MetricsServer Addon  `yaml:"metricsServer"`
	Backup        Backup `yaml:"backup"`
	// Extra are further Helm charts installed after the built-in add-ons,
	// in order (see docs/spec.md).
	Extra []ExtraChart `yaml:"extra,omitempty"`

	// Ingress is Traefik behind the ingress load balancer (ingress.go).
	Ingress Ingress `yaml:"ingress"`
}

// Addon is one add-on's switch, pinned version, chart and values.
type Addon struct {
	// Enabled switches the add-on; nil takes the default.
	Enabled *bool `yaml:"enabled,omitempty"`
	// Version is the application release to install, "vX.Y.Z"; it picks
	// the chart version (ChartVersion) unless Chart.Version is set.
	Version string `yaml:"version,omitempty"`
	// Chart overrides the pinned upstream chart: repository (a mirror),
	// name, version, digest or path (a local chart directory or .tgz,
	// relative to the spec file's folder). nil keeps the pin.
	Chart *charts.Ref `yaml:"chart,omitempty"`
	// Values are the operator's chart values, merged over ohmytalos's
	// (the operator wins; see `ohmytalos addons values NAME`).
	Values map[string]any `yaml:"values,omitempty"`
	// Managed false hands the release over (to helm or Flux): ohmytalos
	// stops installing and upgrading it. nil means true.
	Managed *bool `yaml:"managed,omitempty"`
}

// On reports whether the (defaulted) add-on is switched on.
func (a Addon) On() bool { return a.Enabled != nil && *a.Enabled }

// IsManaged reports whether ohmytalos installs and upgrades the add-on's
// release (managed is unset or true).
func (a Addon) IsManaged() bool { return a.Managed == nil || *a.Managed }

// AddonVersion is one add-on's name (its spec key) and pinned default.
type AddonVersion struct {
	Key, Version string
}

// DefaultAddonVersions lists the pinned default version of every add-on,
// in install order (for `ohmytalos version`).
func DefaultAddonVersions() []AddonVersion {
	return []AddonVersion{
		{"cilium", DefaultCiliumVersion},
		{"hcloudCCM", DefaultHCloudCCMVersion},
		{"hcloudCSI", DefaultHCloudCSIVersion},
		{"longhorn", DefaultLonghornVersion},
		{"metricsServer", DefaultMetricsServerVersion},
		{"backup", DefaultTalosBackupVersion},
	}
}

// HasStoragePool reports whether a pool is a storage pool.
func (s *Spec) HasStoragePool() bool {
	for _, p := range s.Pools {
		if p.Storage {
			return true
		}
	}
	return false
}

// list pairs each add-on with its key and default version.
func (a *Addons) list() []struct {
	key string
	ad  *Addon
	def string
} {
	return []struct {
		key string
		ad  *Addon
		def string
	}{
		{"cilium", &a.Cilium, DefaultCiliumVersion},
		{"hcloudCCM", &a.HCloudCCM, DefaultHCloudCCMVersion},
		{"hcloudCSI", &a.HCloudCSI, DefaultHCloudCSIVersion},
		{"longhorn", &a.Longhorn, DefaultLonghornVersion},
		{"metricsServer", &a.MetricsServer, DefaultMetricsServerVersion},
	}
}

// defaultAddons switches on what the field notes' cluster needs: Cilium,
// the cloud controller and the CSI driver always, Longhorn when a storage
// pool exists; metrics-server stays off (opt-in).
func (s *Spec) defaultAddons() {
	on := map[string]bool{"cilium": true, "hcloudCCM": true, "hcloudCSI": true, "longhorn": s.HasStoragePool(), "metricsServer": false}
	for _, x := range s.Addons.list() {
		if x.ad.Enabled == nil {
			x.ad.Enabled = boolPtr(on[x.key])
		}
		if x.ad.Version == "" {
			x.ad.Version = x.def
		}
	}
	s.defaultBackup()
	s.defaultExtra()
	s.defaultIngress()
}

var addonVersion = regexp.MustCompile(`^v\d+\.\d+\.\d+(-[0-9A-Za-z.-]+)?$`)

// validateAddons checks versions, charts and the combinations that
// cannot work.
func (s *Spec) validateAddons(add func(field, reason, fix string)) {
	s.validateBackup(add)
	s.validateIngress(add)
	for _, x := range s.Addons.list() {
		if !addonVersion.MatchString(x.ad.Version) {
			add("addons."+x.key+".version", fmt.Sprintf("%q is not a release version", x.ad.Version),
				fmt.Sprintf("use the form %q (the pinned default), or omit it", x.def))
		} else {
			validateChartVersion("addons."+x.key, x.key, *x.ad, add)
		}
		if x.ad.Chart != nil {
			validateChartRef("addons."+x.key+".chart", *x.ad.Chart, false, add)
		}
	}
	s.validateExtra(add)
	if s.Addons.Longhorn.On() && !s.HasStoragePool() {
		add("addons.longhorn.enabled", "Longhorn is switched on but no pool has storage: true, so no node carries a Longhorn volume disk",
			"mark a pool with storage: true, or set addons.longhorn.enabled: false")
	}
	if s.Addons.HCloudCSI.On() && !s.Addons.HCloudCCM.On() {
		add("addons.hcloudCSI.enabled", "the CSI driver places volumes by the nodes' Hetzner topology labels, which the cloud controller sets",
			"switch addons.hcloudCCM on, or switch the CSI driver off too")
	}
}
