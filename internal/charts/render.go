package charts

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"helm.sh/helm/v4/pkg/chart/common"
	"helm.sh/helm/v4/pkg/chart/common/util"
	chart "helm.sh/helm/v4/pkg/chart/v2"
	chartutil "helm.sh/helm/v4/pkg/chart/v2/util"
	"helm.sh/helm/v4/pkg/engine"
	releaseutil "helm.sh/helm/v4/pkg/release/v1/util"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
)

// Rendered is a chart rendered as helm install would render it.
type Rendered struct {
	// CRDs are the chart's crds/ files (helm installs them first, and
	// never upgrades or deletes them).
	CRDs []*unstructured.Unstructured
	// Objects are the templates' objects in helm's install order
	// (releaseutil.InstallOrder), hooks excluded.
	Objects []*unstructured.Unstructured
	// Hooks are the hook objects (helm.sh/hook), in their weight order.
	Hooks []*unstructured.Unstructured
	// Manifest is Objects as helm stores it in the release record:
	// "---\n# Source: FILE\n..." documents.
	Manifest string
}

// Render renders c as release rel with values at the cluster's Kubernetes
// version kubeVersion (e.g. "1.36.3"), as `helm template --kube-version`
// does (pkg/action/install.go, client-only): the chart's kubeVersion
// constraint is judged, the values are checked against the chart's
// values.schema.json, and the templates see .Capabilities.KubeVersion.
func Render(c *Chart, rel Release, values map[string]any, kubeVersion string) (*Rendered, error) {
	ch := c.Chart
	name := ch.Name() + " " + ch.Metadata.Version

	kv, err := common.ParseKubeVersion(kubeVersion)
	if err != nil {
		return nil, fmt.Errorf("render chart %s: kubernetes version %q: %w", name, kubeVersion, err)
	}

	// As pkg/action/action.go renderResources.
	if ch.Metadata.KubeVersion != "" && !chartutil.IsCompatibleRange(ch.Metadata.KubeVersion, kv.String()) {
		return nil, fmt.Errorf("chart %s requires kubeVersion %s, which Kubernetes %s is not: pick a chart version that supports it (addons.NAME.chart.version) or another Kubernetes version",
			name, ch.Metadata.KubeVersion, kv.Version)
	}

	if err := chartutil.ProcessDependencies(ch, values); err != nil {
		return nil, fmt.Errorf("render chart %s: dependencies: %w", name, err)
	}

	caps := common.DefaultCapabilities.Copy()
	caps.KubeVersion = *kv

	opts := common.ReleaseOptions{Name: rel.Name, Namespace: rel.Namespace, Revision: 1, IsInstall: true}

	vals, err := util.ToRenderValuesWithSchemaValidation(ch, values, opts, caps, false)
	if err != nil {
		return nil, fmt.Errorf("chart %s refuses the values: %w: fix addons.NAME.values", name, err)
	}

	files, err := engine.Engine{}.RenderWithContext(context.Background(), ch, vals)
	if err != nil {
		return nil, fmt.Errorf("chart %s does not render with these values: %w: fix addons.NAME.values", name, err)
	}

	return sortRendered(ch.Name(), files, ch.CRDObjects(), caps)
}

// sortRendered splits and orders rendered files as helm install does.
func sortRendered(chartName string, files map[string]string, crds []chart.CRD, caps *common.Capabilities) (*Rendered, error) {
	for k := range files {
		if strings.HasSuffix(k, "NOTES.txt") {
			delete(files, k)
		}
	}

	hooks, manifests, err := releaseutil.SortManifests(files, caps.APIVersions, releaseutil.InstallOrder)
	if err != nil {
		return nil, fmt.Errorf("chart %s renders invalid YAML: %w", chartName, err)
	}

	out := &Rendered{}

	var b strings.Builder
	for _, m := range manifests {
		fmt.Fprintf(&b, "---\n# Source: %s\n%s\n", m.Name, m.Content)

		objs, err := decode(m.Content)
		if err != nil {
			return nil, fmt.Errorf("chart %s: %s: %w", chartName, m.Name, err)
		}

		out.Objects = append(out.Objects, objs...)
	}

	out.Manifest = b.String()

	for _, h := range hooks {
		objs, err := decode(h.Manifest)
		if err != nil {
			return nil, fmt.Errorf("chart %s: %s: %w", chartName, h.Path, err)
		}

		out.Hooks = append(out.Hooks, objs...)
	}

	// In the chart's file order, as pkg/action/install.go installCRDs.
	for _, crd := range crds {
		objs, err := decode(string(crd.File.Data))
		if err != nil {
			return nil, fmt.Errorf("chart %s: %s: %w", chartName, crd.Filename, err)
		}

		out.CRDs = append(out.CRDs, objs...)
	}

	return out, nil
}

// decode reads every object of a multi-document YAML stream.
func decode(doc string) ([]*unstructured.Unstructured, error) {
	d := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader([]byte(doc)), 4096)

	var out []*unstructured.Unstructured
	for {
		var m map[string]any
		if err := d.Decode(&m); err != nil {
			if errors.Is(err, io.EOF) {
				return out, nil
			}

			return nil, err
		}

		if len(m) == 0 {
			continue
		}

		out = append(out, &unstructured.Unstructured{Object: m})
	}
}
