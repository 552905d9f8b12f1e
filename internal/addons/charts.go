package addons

import (
	"fmt"
	"strings"

	"github.com/ohmytalos/ohmytalos/internal/charts"
	"github.com/ohmytalos/ohmytalos/internal/spec"
)

// ingressAddon is the ingress add-on's name (issue 20: Traefik behind the
// ingress load balancer); its spec key is addons.ingress.
const ingressAddon = "ingress"

// Chart is one add-on's upstream Helm chart, pinned, and its release.
type Chart struct {
	// Addon is the add-on's name (Names), e.g. "hcloud-ccm".
	Addon string
	// Key is its key under addons in the spec, e.g. "hcloudCCM".
	Key string
	// Ref is the pinned chart of the default release.
	Ref charts.Ref
	// Release is the Helm release ohmytalos installs it as.
	Release charts.Release
	// Digests are the archive digests ("sha256:<hex>") of the chart
	// versions ohmytalos knows, by chart version; Ref.Digest is one of them.
	Digests map[string]string
}

// Charts is the pins table: every built-in add-on that comes from an
// upstream chart, in install order. Repository URLs and chart names were
// checked against each project's own install docs; digests are the
// sha256 of the chart archive as the repository's index.yaml lists it.
func Charts() []Chart {
	out := pins()
	for i := range out {
		out[i].Ref.Digest = out[i].Digests[out[i].Ref.Version]
	}
	return out
}

// traefikNS is the ingress add-on's namespace (issue 20).
const traefikNS = "traefik"

// pins are the table's rows, Ref.Digest filled by Charts.
func pins() []Chart {
	return []Chart{
		// helm.cilium.io is cilium/charts (CNAME); index.yaml entry
		// cilium 1.19.6, digest checked against the archive itself.
		pin(Cilium, "cilium", ciliumNS, "https://helm.cilium.io/", "cilium",
			known{"1.19.6", "sha256:21c43cf53841f9ab0375047d95aa4c64051ea52bbd2c679416e6408f5f1c9179"}),
		// charts.hetzner.cloud is hetznercloud/helm-charts (CNAME);
		// hcloud-cloud-controller-manager chart/README.md: helm repo add
		// hcloud https://charts.hetzner.cloud. Digest: its index.yaml,
		// equal to the archive's Git LFS oid.
		pin(HCloudCCM, "hcloudCCM", hcloudNS, "https://charts.hetzner.cloud", "hcloud-cloud-controller-manager",
			known{"1.35.0", "sha256:22ed0126b392e1100a942dbe5fb47cd8057b43138d9974c308760ad58f2eac24"}),
		// csi-driver chart/Chart.yaml names the chart hcloud-csi; same
		// repository and index as the cloud controller.
		pin(HCloudCSI, "hcloudCSI", hcloudNS, "https://charts.hetzner.cloud", "hcloud-csi",
			known{"2.22.1", "sha256:b9a9d4667886f9454007acd63cf405d3db3d674eeb93f05d59451439884775a4"}),
		// longhorn/longhorn chart/README.md: helm repo add longhorn
		// https://charts.longhorn.io. The stored index (longhorn/charts
		// gh-pages) stops in 2024, before 1.10.1: this digest is the
		// archive's sha256 as four independent pins of
		// charts.longhorn.io's longhorn-1.10.1.tgz give it, not read from
		// the index itself.
		pin(Longhorn, "longhorn", longhornNS, "https://charts.longhorn.io", "longhorn",
			known{"1.10.1", "sha256:a871d397e19cf3243949abd41fd294869f5c2c490014f29e71866a2433ec7fb9"}),
		// kubernetes-sigs/metrics-server charts/metrics-server; index on
		// its gh-pages branch: 3.13.0 ships appVersion 0.8.0, 3.13.1 0.8.1.
		pin(MetricsServer, "metricsServer", metricsNS, "https://kubernetes-sigs.github.io/metrics-server/", "metrics-server",
			known{"3.13.0", "sha256:fb929902e3b7565663cdd1734f31d63735c932be1541a7228b5aeef6d2348a1f"},
			known{"3.13.1", "sha256:084e6edb680cf4e2acc30bd496568c53fdf663cbacf6e17876b25785c35b7a13"}),
		// traefik/traefik-helm-chart README.md: helm repo add traefik
		// https://traefik.github.io/charts. Its index (traefik/charts)
		// is not stored here: the digest of 41.6.0 (appVersion v3.7.13)
		// is the archive's sha256 as three independent pins of
		// traefik.github.io/charts/traefik/traefik-41.6.0.tgz give it.
		pin(ingressAddon, "ingress", traefikNS, "https://traefik.github.io/charts", "traefik",
			known{"41.6.0", "sha256:cd7254ea853da73bdb88edc896f079b88d43ffa0bfe699fdbf21081361eac365"}),
	}
}

// known is a chart version ohmytalos knows and its archive digest.
type known struct{ version, digest string }

// pin is one row of the table: addon (spec key key) from chart in repo,
// released under the chart's own name in ns. The first known version is
// the default release's.
func pin(addon, key, ns, repo, chart string, versions ...known) Chart {
	c := Chart{
		Addon: addon, Key: key,
		Ref:     charts.Ref{Repository: repo, Name: chart, Version: versions[0].version},
		Release: charts.Release{Name: chart, Namespace: ns},
		Digests: map[string]string{},
	}
	for _, v := range versions {
		c.Digests[v.version] = v.digest
	}
	return c
}

// ChartOf is the pins table's entry of an add-on, by name ("hcloud-ccm"),
// spec key ("hcloudCCM") or release name; false when it has no chart.
func ChartOf(name string) (Chart, bool) {
	for _, c := range Charts() {
		if c.Addon == name || c.Key == name || c.Release.Name == name {
			return c, true
		}
	}
	return Chart{}, false
}

// chartNamed is ChartOf, or an error naming the add-ons that come from a
// chart.
func chartNamed(name string) (Chart, error) {
	if c, ok := ChartOf(name); ok {
		return c, nil
	}
	var keys []string
	for _, c := range pins() {
		keys = append(keys, c.Key)
	}
	return Chart{}, fmt.Errorf("add-on %q comes from no chart: use one of %s", name, strings.Join(keys, ", "))
}

// ChartRef is the chart to install for an add-on of a defaulted spec: the
// pin, at the chart version of addons.KEY.version (spec.ChartVersion),
// with addons.KEY.chart's fields over it. The digest is the pinned one
// of that chart version, "" (not pinned) for a version ohmytalos does not
// know or a chart.path (the operator's own chart, maybe patched), and the
// operator's when chart.digest is set. A chart.path is resolved against
// the spec file's folder.
func ChartRef(sp *spec.Spec, name string) (charts.Ref, error) {
	c, err := chartNamed(name)
	if err != nil {
		return charts.Ref{}, err
	}
	a, ok := specAddon(sp, c.Key)
	if !ok {
		return c.Ref, nil
	}
	v, ok := a.ChartVersionOf(c.Key)
	if !ok {
		return charts.Ref{}, fmt.Errorf("addons.%s.version %s has no known chart version: set addons.%s.chart.version", c.Key, a.Version, c.Key)
	}
	r := c.Ref
	r.Version, r.Digest = v, c.Digests[v]
	if o := a.Chart; o != nil {
		r = overlay(r, *o)
		if o.Path != "" {
			r.Path = sp.ChartPath(*o)
		}
	}
	return r, nil
}

// overlay sets o's non-empty fields over r. A different chart version
// or name, or a path, drops the pinned digest unless o carries its own.
func overlay(r, o charts.Ref) charts.Ref {
	if (o.Version != "" && o.Version != r.Version) || (o.Name != "" && o.Name != r.Name) || o.Path != "" {
		r.Digest = ""
	}
	for _, f := range []struct {
		dst *string
		src string
	}{
		{&r.Repository, o.Repository}, {&r.Name, o.Name}, {&r.Version, o.Version}, {&r.Digest, o.Digest}, {&r.Path, o.Path},
	} {
		if f.src != "" {
			*f.dst = f.src
		}
	}
	return r
}

// specAddon is the spec's add-on under key.
func specAddon(sp *spec.Spec, key string) (spec.Addon, bool) {
	a := sp.Addons
	switch key {
	case "cilium":
		return a.Cilium, true
	case "hcloudCCM":
		return a.HCloudCCM, true
	case "hcloudCSI":
		return a.HCloudCSI, true
	case "longhorn":
		return a.Longhorn, true
	case "metricsServer":
		return a.MetricsServer, true
	case "ingress":
		ad := a.Ingress
		if ad.Version == "" {
			ad.Version = spec.DefaultIngressVersion
		}
		return ad, true
	}
	return spec.Addon{}, false
}
