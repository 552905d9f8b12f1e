package spec

import (
	"fmt"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"

	"github.com/ohmytalos/ohmytalos/internal/charts"
)

// ExtraChart is one further Helm chart of addons.extra, installed after
// the built-in add-ons as a release NAME in NAMESPACE.
type ExtraChart struct {
	// Name is the release name (a DNS label of at most 53 characters,
	// Helm's limit for release names).
	Name string `yaml:"name"`
	// Namespace is the release's namespace; "" takes Name.
	Namespace string `yaml:"namespace,omitempty"`
	// Chart is the chart: repository, name and version, or path.
	Chart charts.Ref `yaml:"chart"`
	// Values are the chart's values.
	Values map[string]any `yaml:"values,omitempty"`
}

// chartVersions maps application releases to chart versions for the
// add-ons whose charts are versioned apart from the application. Sources:
// the repositories' index.yaml (appVersion of each chart version):
// kubernetes-sigs.github.io/metrics-server (gh-pages index.yaml),
// traefik.github.io/charts (traefik/traefik-helm-chart traefik/Chart.yaml).
var chartVersions = map[string]map[string]string{
	"metricsServer": {"v0.8.0": "3.13.0", "v0.8.1": "3.13.1"},
	"ingress":       {traefikRelease: "41.6.0"},
}

// traefikRelease is the Traefik Proxy release of the ingress add-on
// (issue 20): the one traefik chart 41.6.0 ships (appVersion v3.7.13).
const traefikRelease = "v3.7.13"

// ChartVersion is the chart version that ships application release v of
// the add-on with spec key key: v without its "v" for the charts versioned
// with their application (cilium, hcloudCCM, hcloudCSI, longhorn), the
// table of known pairs for metricsServer and ingress. false when the
// release has no known chart version: addons.KEY.chart.version must say.
func ChartVersion(key, v string) (string, bool) {
	if t, ok := chartVersions[key]; ok {
		c, ok := t[v]
		return c, ok
	}
	if !addonVersion.MatchString(v) {
		return "", false
	}
	return strings.TrimPrefix(v, "v"), true
}

// ChartVersionOf is the chart version of add-on key: chart.version when
// set, else ChartVersion of its release.
func (a Addon) ChartVersionOf(key string) (string, bool) {
	if a.Chart != nil && a.Chart.Version != "" {
		return a.Chart.Version, true
	}
	return ChartVersion(key, a.Version)
}

// knownVersions lists the releases the table maps for key, for fixes.
func knownVersions(key string) string {
	var vs []string
	for v := range chartVersions[key] {
		vs = append(vs, v)
	}
	sort.Strings(vs)
	return strings.Join(vs, ", ")
}

// validateChartVersion refuses a release of a separately versioned chart
// that the table does not know, unless chart.version or chart.path says
// which chart to take.
func validateChartVersion(field, key string, a Addon, add func(field, reason, fix string)) {
	if a.Chart != nil && (a.Chart.Version != "" || a.Chart.Path != "") {
		return
	}
	if _, ok := ChartVersion(key, a.Version); ok {
		return
	}
	add(field+".version", fmt.Sprintf("%s is not a release ohmytalos knows the %s chart version of", a.Version, key),
		fmt.Sprintf("set %s.chart.version to the chart version that ships it (helm search repo --versions), or use one of %s", field, knownVersions(key)))
}

var (
	chartDigest = regexp.MustCompile(`^sha256:[0-9a-f]{64}$`)
	// releaseName is Helm's release name rule (pkg/chartutil
	// ValidateReleaseName): a DNS-1123 label of at most 53 characters.
	releaseName = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`)
)

// validateChartRef checks a chart reference: the repository's scheme, the
// digest's form and, for an extra chart, that it names a chart.
func validateChartRef(field string, r charts.Ref, extra bool, add func(field, reason, fix string)) {
	if r.Repository != "" {
		if reason := repositoryProblem(r.Repository); reason != "" {
			add(field+".repository", reason, `use an https:// Helm repository (with an index.yaml) or an oci:// registry path; http:// only on a loopback address`)
		}
	}
	if r.Digest != "" && !chartDigest.MatchString(r.Digest) {
		add(field+".digest", fmt.Sprintf("%q is not a chart digest", Shorten(r.Digest)),
			`write "sha256:" and the 64 lowercase hex digits the repository's index.yaml lists as the chart's digest, or omit it`)
	}
	if !extra || r.Path != "" {
		return
	}
	if r.Repository == "" {
		add(field+".repository", "is required (or path)", `set the chart's Helm repository, e.g. "https://charts.jetstack.io", or path: a local chart directory or .tgz`)
	}
	if r.Name == "" {
		add(field+".name", "is required (or path)", `set the chart's name in the repository, e.g. "cert-manager"`)
	}
	if r.Version == "" {
		add(field+".version", "is required (or path): an unpinned chart would change under the cluster", "set the chart version as the repository's index lists it (helm search repo NAME --versions)")
	}
}

// repositoryProblem is why repo is no usable chart repository, or "".
func repositoryProblem(repo string) string {
	u, err := url.Parse(repo)
	if err != nil || u.Host == "" {
		return fmt.Sprintf("%q is not a URL", Shorten(repo))
	}
	switch u.Scheme {
	case "https", "oci":
		return ""
	case "http":
		if loopback(u.Hostname()) {
			return ""
		}
		return fmt.Sprintf("%q is plain http: anyone on the path could swap the chart", Shorten(repo))
	}
	return fmt.Sprintf("%q has scheme %q", Shorten(repo), u.Scheme)
}

// loopback reports whether host is localhost or a loopback address.
func loopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// reservedReleases are the names of the built-in add-ons and their Helm
// releases (internal/addons Names and Charts): an extra chart of the same
// name would clash with them in talos-config's output and in
// `ohmytalos addons values NAME`.
var reservedReleases = []string{
	"hcloud-secret", "cilium", "hcloud-ccm", "hcloud-cloud-controller-manager", "hcloud-csi",
	"longhorn", "metrics-server", "talos-backup", "ingress", "traefik",
}

// ReservedReleaseNames lists the names addons.extra may not take.
func ReservedReleaseNames() []string { return append([]string(nil), reservedReleases...) }

// defaultExtra gives every extra chart without a namespace its own name.
func (s *Spec) defaultExtra() {
	for i := range s.Addons.Extra {
		if s.Addons.Extra[i].Namespace == "" {
			s.Addons.Extra[i].Namespace = s.Addons.Extra[i].Name
		}
	}
}

// validateExtra checks addons.extra: unique valid names, valid
// namespaces and chart references.
func (s *Spec) validateExtra(add func(field, reason, fix string)) {
	seen := map[string]bool{}
	for i, x := range s.Addons.Extra {
		field := fmt.Sprintf("addons.extra[%d]", i)
		switch {
		case x.Name == "":
			add(field+".name", "is required", `name the release, e.g. "cert-manager"`)
		case len(x.Name) > 53 || !releaseName.MatchString(x.Name):
			add(field+".name", fmt.Sprintf("%q is not a release name (a lowercase DNS label of at most 53 characters)", Shorten(x.Name)),
				`use lowercase letters, digits and '-', e.g. "cert-manager"`)
		case seen[x.Name]:
			add(field+".name", fmt.Sprintf("%q is the name of an earlier addons.extra entry", x.Name), "give every extra chart its own name")
		case contains(reservedReleases, x.Name):
			add(field+".name", fmt.Sprintf("%q is the name of a built-in add-on", x.Name),
				"configure the built-in one under addons (its values and chart), or give the extra chart another name")
		}
		seen[x.Name] = true
		if x.Namespace != "" && (len(x.Namespace) > 63 || !releaseName.MatchString(x.Namespace)) {
			add(field+".namespace", fmt.Sprintf("%q is not a namespace name (a lowercase DNS label of at most 63 characters)", Shorten(x.Namespace)),
				`use lowercase letters, digits and '-', e.g. "cert-manager", or omit it for the release's name`)
		}
		validateChartRef(field+".chart", x.Chart, true, add)
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// chartRefs lists every chart reference with a path, with its field.
func (s *Spec) chartRefs() []struct {
	field string
	ref   charts.Ref
} {
	type fr = struct {
		field string
		ref   charts.Ref
	}
	var out []fr
	for _, x := range s.Addons.list() {
		if x.ad.Chart != nil && x.ad.Chart.Path != "" {
			out = append(out, fr{"addons." + x.key + ".chart.path", *x.ad.Chart})
		}
	}
	for i, x := range s.Addons.Extra {
		if x.Chart.Path != "" {
			out = append(out, fr{fmt.Sprintf("addons.extra[%d].chart.path", i), x.Chart})
		}
	}
	return out
}

// LoadChartPaths checks that every chart path exists, relative to dir
// (the spec file's folder, as for "@PATH" patches), and remembers dir for
// ChartPath; every problem is returned at once.
func (s *Spec) LoadChartPaths(dir string) Problems {
	s.dir = dir
	var ps Problems
	for _, c := range s.chartRefs() {
		path := s.ChartPath(c.ref)
		st, err := os.Stat(path)
		switch {
		case err != nil:
			ps = append(ps, Problem{Field: c.field, Reason: "cannot read the chart: " + err.Error(),
				Fix: "fix the path: a chart directory or .tgz, relative to the spec file's folder (" + dir + ")"})
		case !st.IsDir() && !strings.HasSuffix(path, ".tgz") && !strings.HasSuffix(path, ".tar.gz"):
			ps = append(ps, Problem{Field: c.field, Reason: fmt.Sprintf("%s is neither a directory nor a .tgz archive", c.ref.Path),
				Fix: "point at the chart's directory (holding Chart.yaml) or at its archive (helm package / helm pull)"})
		case st.IsDir() && c.ref.Digest != "":
			ps = append(ps, Problem{Field: strings.TrimSuffix(c.field, ".path") + ".digest", Reason: fmt.Sprintf("%s is a chart directory, which has no archive digest to check", c.ref.Path),
				Fix: "point path at the chart's .tgz (helm package / helm pull), or drop digest"})
		}
	}
	return ps
}

// ChartPath is r.Path resolved against the spec file's folder (as Load
// read it; the working directory for a spec not loaded from a file), or
// "" when r has no path.
func (s *Spec) ChartPath(r charts.Ref) string {
	if r.Path == "" || filepath.IsAbs(r.Path) {
		return r.Path
	}
	return filepath.Join(s.dir, r.Path)
}
