package chartrepo_test

import (
	"bytes"
	"errors"
	"io"
	"path"
	"sort"
	"strings"
	"testing"

	"helm.sh/helm/v4/pkg/chart/common"
	chartutil "helm.sh/helm/v4/pkg/chart/common/util"
	chart "helm.sh/helm/v4/pkg/chart/v2"
	"helm.sh/helm/v4/pkg/chart/v2/loader"
	v2util "helm.sh/helm/v4/pkg/chart/v2/util"
	"helm.sh/helm/v4/pkg/engine"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"

	"github.com/ohmytalos/ohmytalos/internal/sandbox/chartrepo"
)

// kubeVersion is the sandbox's (Talos v1.13.9's default Kubernetes).
const kubeVersion = "v1.36.3"

// rendered is one render of a stand-in: objects by "Kind ns/name".
type rendered struct {
	objs map[string]*unstructured.Unstructured
	crds []*unstructured.Unstructured
}

func (r rendered) get(t *testing.T, kind, ns, name string) *unstructured.Unstructured {
	t.Helper()
	o, ok := r.objs[kind+" "+ns+"/"+name]
	if !ok {
		keys := make([]string, 0, len(r.objs))
		for k := range r.objs {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		t.Fatalf("no %s %s/%s rendered; got %v", kind, ns, name, keys)
	}
	return o
}

func (r rendered) has(kind, ns, name string) bool {
	_, ok := r.objs[kind+" "+ns+"/"+name]
	return ok
}

func loadChart(t *testing.T, name string) *chart.Chart {
	t.Helper()
	s, err := chartrepo.New()
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range s.Charts() {
		if c.Name == name {
			ch, err := loader.LoadArchive(bytes.NewReader(c.Archive))
			if err != nil {
				t.Fatal(err)
			}
			return ch
		}
	}
	t.Fatalf("no stand-in chart %s", name)
	return nil
}

// render renders a stand-in as helm install does: the chart's kubeVersion
// constraint checked, values coalesced with the chart's, helm's engine at
// the sandbox's Kubernetes version.
func render(t *testing.T, name, release, ns string, vals map[string]any) (rendered, error) {
	t.Helper()
	c := loadChart(t, name)
	if kv := c.Metadata.KubeVersion; kv != "" && !v2util.IsCompatibleRange(kv, kubeVersion) {
		t.Fatalf("%s: kubeVersion %q refuses %s", name, kv, kubeVersion)
	}
	caps := common.DefaultCapabilities.Copy()
	kv, err := common.ParseKubeVersion(kubeVersion)
	if err != nil {
		t.Fatal(err)
	}
	caps.KubeVersion = *kv
	top, err := chartutil.ToRenderValues(c, vals, common.ReleaseOptions{Name: release, Namespace: ns, IsInstall: true, Revision: 1}, caps)
	if err != nil {
		return rendered{}, err
	}
	out, err := engine.Render(c, top)
	if err != nil {
		return rendered{}, err
	}
	r := rendered{objs: map[string]*unstructured.Unstructured{}}
	for file, manifest := range out {
		if path.Ext(file) != ".yaml" {
			continue
		}
		for _, o := range decode(t, file, manifest) {
			if o.GetNamespace() == "" && namespaced(o.GetKind()) {
				o.SetNamespace(ns)
			}
			r.objs[o.GetKind()+" "+o.GetNamespace()+"/"+o.GetName()] = o
		}
	}
	for _, crd := range c.CRDObjects() {
		r.crds = append(r.crds, decode(t, crd.Filename, string(crd.File.Data))...)
	}
	return r, nil
}

func namespaced(kind string) bool {
	switch kind {
	case "ClusterRole", "ClusterRoleBinding", "CustomResourceDefinition", "StorageClass", "CSIDriver", "APIService", "IngressClass", "Namespace":
		return false
	}
	return true
}

func decode(t *testing.T, file, manifest string) []*unstructured.Unstructured {
	t.Helper()
	var out []*unstructured.Unstructured
	d := utilyaml.NewYAMLOrJSONDecoder(strings.NewReader(manifest), 4096)
	for {
		var m map[string]any
		if err := d.Decode(&m); err != nil {
			if errors.Is(err, io.EOF) {
				return out
			}
			t.Fatalf("%s does not parse: %v\n%s", file, err, manifest)
		}
		if len(m) == 0 {
			continue
		}
		o := &unstructured.Unstructured{Object: m}
		if o.GetKind() == "" || o.GetAPIVersion() == "" || o.GetName() == "" {
			t.Fatalf("%s: an object without apiVersion, kind or name: %v", file, m)
		}
		out = append(out, o)
	}
}

func mustRender(t *testing.T, name, release, ns string, vals map[string]any) rendered {
	t.Helper()
	r, err := render(t, name, release, ns, vals)
	if err != nil {
		t.Fatalf("render %s: %v", name, err)
	}
	return r
}

// podSpec is a workload's pod template spec.
func podSpec(t *testing.T, o *unstructured.Unstructured) map[string]any {
	t.Helper()
	s, ok, _ := unstructured.NestedMap(o.Object, "spec", "template", "spec")
	if !ok {
		t.Fatalf("%s %s has no pod template", o.GetKind(), o.GetName())
	}
	return s
}

func containers(spec map[string]any, field string) []map[string]any {
	var out []map[string]any
	l, _ := spec[field].([]any)
	for _, c := range l {
		if m, ok := c.(map[string]any); ok {
			out = append(out, m)
		}
	}
	return out
}

func container(t *testing.T, spec map[string]any, name string) map[string]any {
	t.Helper()
	for _, f := range []string{"containers", "initContainers"} {
		for _, c := range containers(spec, f) {
			if c["name"] == name {
				return c
			}
		}
	}
	t.Fatalf("no container %s", name)
	return nil
}

// env is a container's env by name: the value, or "secret NAME/KEY".
func env(c map[string]any) map[string]string {
	out := map[string]string{}
	l, _ := c["env"].([]any)
	for _, e := range l {
		m, _ := e.(map[string]any)
		name, _ := m["name"].(string)
		if v, ok := m["value"].(string); ok {
			out[name] = v
			continue
		}
		if sec, ok, _ := unstructured.NestedStringMap(m, "valueFrom", "secretKeyRef"); ok {
			out[name] = "secret " + sec["name"] + "/" + sec["key"]
			continue
		}
		out[name] = "(from elsewhere)"
	}
	return out
}

func strs(v any) []string {
	l, _ := v.([]any)
	out := make([]string, 0, len(l))
	for _, s := range l {
		out = append(out, s.(string))
	}
	return out
}

func contains(l []string, s string) bool {
	for _, x := range l {
		if x == s {
			return true
		}
	}
	return false
}
