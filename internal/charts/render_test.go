package charts

import (
	"strings"
	"testing"
)

func demoChart(t *testing.T, edit func(*chartT)) *Chart {
	t.Helper()

	c := loadDemo(t)
	if edit != nil {
		edit(c)
	}

	return &Chart{Chart: c}
}

func TestRenderInstallOrderCRDsApartCapabilities(t *testing.T) {
	r, err := Render(demoChart(t, nil), Release{Name: "rel", Namespace: "ns"}, map[string]any{"replicas": 3}, "1.36.3")
	if err != nil {
		t.Fatal(err)
	}

	var kinds []string
	for _, o := range r.Objects {
		kinds = append(kinds, o.GetKind()+"/"+o.GetNamespace()+"/"+o.GetName())
	}

	// helm's InstallOrder: ServiceAccount, ConfigMap, ..., Deployment.
	if got, want := strings.Join(kinds, " "), "ServiceAccount/ns/rel ConfigMap/ns/rel-config Deployment/ns/rel"; got != want {
		t.Fatalf("objects %s, want %s", got, want)
	}

	if len(r.CRDs) != 1 || r.CRDs[0].GetName() != "widgets.demo.example" {
		t.Fatalf("CRDs %v, want widgets.demo.example apart", r.CRDs)
	}

	cm := r.Objects[1].Object["data"].(map[string]any)
	if cm["kube"] != "v1.36.3" {
		t.Errorf(".Capabilities.KubeVersion.Version rendered %v, want v1.36.3", cm["kube"])
	}

	if n, _, _ := unstructuredInt(r.Objects[2].Object, "spec", "replicas"); n != 3 {
		t.Errorf("replicas %d, want the value 3", n)
	}

	if strings.Contains(r.Manifest, "NOTES") || !strings.Contains(r.Manifest, "# Source: demo/templates/deployment.yaml") {
		t.Errorf("manifest is not helm's record shape:\n%s", r.Manifest)
	}
}

func TestRenderRefusesKubeVersion(t *testing.T) {
	c := demoChart(t, func(c *chartT) { c.Metadata.KubeVersion = ">=1.40.0-0" })

	_, err := Render(c, Release{Name: "rel", Namespace: "ns"}, nil, "1.36.3")
	if err == nil {
		t.Fatal("a chart requiring Kubernetes >=1.40 rendered for 1.36.3")
	}

	mustName(t, err, "demo 1.0.0", ">=1.40.0-0", "v1.36.3", "chart.version")
}

func TestRenderFailsWithTheChartsError(t *testing.T) {
	_, err := Render(demoChart(t, nil), Release{Name: "rel", Namespace: "ns"}, map[string]any{"greeting": nil}, "1.36.3")
	if err == nil || !strings.Contains(err.Error(), "greeting is required") || !strings.Contains(err.Error(), "values") {
		t.Fatalf("values that do not render: %v", err)
	}
}

func unstructuredInt(obj map[string]any, keys ...string) (int64, bool, error) {
	var cur any = obj
	for _, k := range keys {
		m, ok := cur.(map[string]any)
		if !ok {
			return 0, false, nil
		}

		cur = m[k]
	}

	switch n := cur.(type) {
	case int64:
		return n, true, nil
	case float64:
		return int64(n), true, nil
	}

	return 0, false, nil
}
