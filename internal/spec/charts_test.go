package spec

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ohmytalos/ohmytalos/internal/charts"
)

func TestChartVersion(t *testing.T) {
	cases := []struct {
		key, v, want string
		ok           bool
	}{
		{"cilium", "v1.19.6", "1.19.6", true},
		{"hcloudCCM", "v1.35.0", "1.35.0", true},
		{"longhorn", "v1.10.1", "1.10.1", true},
		{"metricsServer", "v0.8.0", "3.13.0", true},
		{"metricsServer", "v0.8.1", "3.13.1", true},
		{"metricsServer", "v0.7.2", "", false},
		{"ingress", "v3.7.13", "41.6.0", true},
		{"ingress", "v3.7.12", "", false},
		{"cilium", "1.19", "", false},
	}
	for _, c := range cases {
		got, ok := ChartVersion(c.key, c.v)
		if got != c.want || ok != c.ok {
			t.Errorf("ChartVersion(%s, %s) = %q, %v; want %q, %v", c.key, c.v, got, ok, c.want, c.ok)
		}
	}
	a := Addon{Version: "v0.7.2", Chart: &charts.Ref{Version: "3.12.2"}}
	if v, ok := a.ChartVersionOf("metricsServer"); v != "3.12.2" || !ok {
		t.Errorf("chart.version must win: %q %v", v, ok)
	}
}

func TestChartKeysValidation(t *testing.T) {
	hex := strings.Repeat("ab", 32)
	cases := []struct {
		name      string
		mutate    func(*Spec)
		wantField string // "" = valid
	}{
		{"pinned defaults", nil, ""},
		{"metrics-server release without a known chart", func(s *Spec) { s.Addons.MetricsServer.Version = "v0.7.2" }, "addons.metricsServer.version"},
		{"metrics-server release with chart.version", func(s *Spec) {
			s.Addons.MetricsServer.Version = "v0.7.2"
			s.Addons.MetricsServer.Chart = &charts.Ref{Version: "3.12.2"}
		}, ""},
		{"mirror over https with a digest", func(s *Spec) {
			s.Addons.Cilium.Chart = &charts.Ref{Repository: "https://mirror.example.com/cilium", Digest: "sha256:" + hex}
		}, ""},
		{"oci registry", func(s *Spec) { s.Addons.Cilium.Chart = &charts.Ref{Repository: "oci://registry.example.com/charts"} }, ""},
		{"http on loopback", func(s *Spec) { s.Addons.Cilium.Chart = &charts.Ref{Repository: "http://127.0.0.1:8080/charts"} }, ""},
		{"http elsewhere", func(s *Spec) { s.Addons.Cilium.Chart = &charts.Ref{Repository: "http://mirror.example.com"} }, "addons.cilium.chart.repository"},
		{"ftp", func(s *Spec) { s.Addons.Cilium.Chart = &charts.Ref{Repository: "ftp://mirror.example.com"} }, "addons.cilium.chart.repository"},
		{"bare hex digest", func(s *Spec) { s.Addons.Cilium.Chart = &charts.Ref{Digest: hex} }, "addons.cilium.chart.digest"},
		{"user values and handover", func(s *Spec) {
			f := false
			s.Addons.Cilium.Values = map[string]any{"hubble": map[string]any{"relay": map[string]any{"enabled": true}}}
			s.Addons.Cilium.Managed = &f
		}, ""},
		{"extra chart", func(s *Spec) {
			s.Addons.Extra = []ExtraChart{{Name: "cert-manager", Chart: charts.Ref{Repository: "https://charts.jetstack.io", Name: "cert-manager", Version: "v1.16.2"}}}
		}, ""},
		{"extra chart from a path", func(s *Spec) { s.Addons.Extra = []ExtraChart{{Name: "mine", Chart: charts.Ref{Path: "charts/mine"}}} }, ""},
		{"extra without a version", func(s *Spec) {
			s.Addons.Extra = []ExtraChart{{Name: "cert-manager", Chart: charts.Ref{Repository: "https://charts.jetstack.io", Name: "cert-manager"}}}
		}, "addons.extra[0].chart.version"},
		{"extra without a name of its chart", func(s *Spec) {
			s.Addons.Extra = []ExtraChart{{Name: "x", Chart: charts.Ref{Repository: "https://charts.jetstack.io", Version: "1"}}}
		}, "addons.extra[0].chart.name"},
		{"extra without a repository", func(s *Spec) { s.Addons.Extra = []ExtraChart{{Name: "x", Chart: charts.Ref{Name: "x", Version: "1"}}} }, "addons.extra[0].chart.repository"},
		{"extra named like a built-in", func(s *Spec) { s.Addons.Extra = []ExtraChart{{Name: "cilium", Chart: charts.Ref{Path: "c"}}} }, "addons.extra[0].name"},
		{"extra names twice", func(s *Spec) {
			s.Addons.Extra = []ExtraChart{{Name: "a", Chart: charts.Ref{Path: "c"}}, {Name: "a", Chart: charts.Ref{Path: "d"}}}
		}, "addons.extra[1].name"},
		{"extra name not a DNS label", func(s *Spec) { s.Addons.Extra = []ExtraChart{{Name: "Cert_Manager", Chart: charts.Ref{Path: "c"}}} }, "addons.extra[0].name"},
		{"extra name over 53", func(s *Spec) {
			s.Addons.Extra = []ExtraChart{{Name: strings.Repeat("a", 54), Chart: charts.Ref{Path: "c"}}}
		}, "addons.extra[0].name"},
		{"extra without a name", func(s *Spec) { s.Addons.Extra = []ExtraChart{{Chart: charts.Ref{Path: "c"}}} }, "addons.extra[0].name"},
		{"extra bad namespace", func(s *Spec) {
			s.Addons.Extra = []ExtraChart{{Name: "a", Namespace: "Kube_System", Chart: charts.Ref{Path: "c"}}}
		}, "addons.extra[0].namespace"},
		{"extra bad digest", func(s *Spec) {
			s.Addons.Extra = []ExtraChart{{Name: "a", Chart: charts.Ref{Path: "c", Digest: "md5:00"}}}
		}, "addons.extra[0].chart.digest"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, ps := validated(c.mutate)
			wantProblemOn(t, ps, c.wantField)
		})
	}
}

func TestExtraNamespaceDefaultsToName(t *testing.T) {
	s := &Spec{Name: "demo", Addons: Addons{Extra: []ExtraChart{{Name: "cert-manager", Chart: charts.Ref{Path: "c"}}}}}
	s.Default()
	if s.Addons.Extra[0].Namespace != "cert-manager" {
		t.Fatalf("namespace = %q", s.Addons.Extra[0].Namespace)
	}
}

// TestChartKeysParse reads the keys as an operator writes them: unknown
// keys inside chart are refused, values take any YAML.
func TestChartKeysParse(t *testing.T) {
	doc := `name: demo
addons:
  cilium:
    managed: false
    chart: {repository: "https://mirror.example.com/cilium", version: 1.19.5}
    values:
      hubble: {relay: {enabled: true}}
      anything: [1, two]
  extra:
    - name: cert-manager
      chart: {repository: "https://charts.jetstack.io", name: cert-manager, version: v1.16.2}
      values: {crds: {enabled: true}}
`
	s, err := Parse([]byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	c := s.Addons.Cilium
	if c.IsManaged() || c.Chart.Version != "1.19.5" || c.Values["hubble"] == nil {
		t.Fatalf("cilium = %+v", c)
	}
	if v, _ := c.ChartVersionOf("cilium"); v != "1.19.5" {
		t.Fatalf("chart version %q", v)
	}
	if !s.Addons.HCloudCCM.IsManaged() {
		t.Fatal("managed must default to true")
	}
	if x := s.Addons.Extra[0]; x.Namespace != "cert-manager" || x.Chart.Name != "cert-manager" || x.Values["crds"] == nil {
		t.Fatalf("extra = %+v", x)
	}
	_, err = Parse([]byte("name: demo\naddons:\n  cilium:\n    chart: {repo: https://x.example.com}\n"))
	if ps, ok := err.(Problems); !ok || !ps.Has("addons.cilium.chart.repo") {
		t.Fatalf("want an unknown-key problem for addons.cilium.chart.repo, got %v", err)
	}
}

// TestChartPathsRelativeToSpec: chart paths resolve against the spec
// file's folder, as "@PATH" patches do, and a missing one is refused.
func TestChartPathsRelativeToSpec(t *testing.T) {
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "charts", "cilium"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "charts", "mine-1.0.0.tgz"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "charts", "notes.txt"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	write := func(doc string) string {
		p := filepath.Join(dir, "cluster.yaml")
		if err := os.WriteFile(p, []byte(doc), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	s, err := Load(write("name: demo\naddons:\n  cilium: {chart: {path: charts/cilium}}\n  extra:\n    - {name: mine, chart: {path: charts/mine-1.0.0.tgz}}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if got := s.ChartPath(*s.Addons.Cilium.Chart); got != filepath.Join(dir, "charts", "cilium") {
		t.Fatalf("ChartPath = %s", got)
	}
	_, err = Load(write("name: demo\naddons:\n  cilium: {chart: {path: charts/missing}}\n  extra:\n    - {name: mine, chart: {path: charts/notes.txt}}\n"))
	var ps Problems
	if !errors.As(err, &ps) {
		t.Fatalf("want problems, got %v", err)
	}
	for _, f := range []string{"addons.cilium.chart.path", "addons.extra[0].chart.path"} {
		if !ps.Has(f) {
			t.Errorf("problems lack %s: %v", f, ps)
		}
	}
}

// TestChartDigestOfADirectoryRefused: a digest is checked wherever the
// chart comes from; a chart directory has none, so a digest with one is
// refused when the spec loads (a .tgz with one is checked when fetched).
func TestChartDigestOfADirectoryRefused(t *testing.T) {
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "charts", "mine"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "charts", "mine-1.0.0.tgz"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, "cluster.yaml")
	d := "sha256:" + strings.Repeat("a", 64)
	doc := "name: demo\naddons:\n  extra:\n    - {name: mine, chart: {path: charts/mine, digest: \"" + d + "\"}}\n" +
		"    - {name: packed, chart: {path: charts/mine-1.0.0.tgz, digest: \"" + d + "\"}}\n"
	if err := os.WriteFile(p, []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := Load(p)
	var ps Problems
	if !errors.As(err, &ps) || !ps.Has("addons.extra[0].chart.digest") {
		t.Fatalf("want a problem for addons.extra[0].chart.digest, got %v", err)
	}
	if ps.Has("addons.extra[1].chart.digest") || len(ps) != 1 {
		t.Errorf("a .tgz with a digest is checked when fetched, not refused: %v", ps)
	}
	if !strings.Contains(ps.Error(), "drop digest") {
		t.Errorf("no fix: %v", ps)
	}
}
