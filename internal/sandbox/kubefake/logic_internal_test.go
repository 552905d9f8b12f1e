package kubefake

import (
	"testing"
)

func TestLabelSelectors(t *testing.T) {
	labels := map[string]string{"app": "web", "tier": "front"}

	for sel, want := range map[string]bool{
		"":                          true,
		"app=web":                   true,
		"app==web,tier=front":       true,
		"app!=web":                  false,
		"app in (web, api)":         true,
		"app notin (web)":           false,
		"tier":                      true,
		"!tier":                     false,
		"!missing,app in (x,web)":   true,
		"missing!=x":                true,
		"app in (api),tier=front":   false,
		"tier notin (back),app=web": true,
	} {
		s, err := parseLabelSelector(sel)
		if err != nil {
			t.Fatalf("%q: %v", sel, err)
		}

		if got := s.matches(labels); got != want {
			t.Errorf("%q matches = %v, want %v", sel, got, want)
		}
	}
}

func TestTolerations(t *testing.T) {
	taint := obj{"key": "node.kubernetes.io/not-ready", "effect": "NoSchedule"}
	withValue := obj{"key": "node.cloudprovider.kubernetes.io/uninitialized", "value": "true", "effect": "NoSchedule"}

	cases := []struct {
		name  string
		tol   obj
		taint obj
		want  bool
	}{
		{"exists everything", obj{"operator": "Exists"}, taint, true},
		{"exists key", obj{"key": "node.kubernetes.io/not-ready", "operator": "Exists"}, taint, true},
		{"other effect", obj{"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute"}, taint, false},
		{"equal value", obj{"key": "node.cloudprovider.kubernetes.io/uninitialized", "value": "true", "effect": "NoSchedule"}, withValue, true},
		{"wrong value", obj{"key": "node.cloudprovider.kubernetes.io/uninitialized", "value": "false"}, withValue, false},
		{"other key", obj{"key": "x", "operator": "Exists"}, taint, false},
	}

	for _, c := range cases {
		if got := tolerates([]any{c.tol}, c.taint); got != c.want {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
}

func TestImageIs(t *testing.T) {
	for img, want := range map[string]bool{
		"hetznercloud/hcloud-cloud-controller-manager:v1.27.0":                    true,
		"docker.io/hetznercloud/hcloud-cloud-controller-manager:v1.27.0":          true,
		"registry.local:5000/hetznercloud/hcloud-cloud-controller-manager@sha256": true,
		"hetznercloud/hcloud-cloud-controller-manager-fork:v1":                    false,
		"evil/hetznercloud/hcloud-cloud-controller-manager2":                      false,
	} {
		if got := imageIs(img, ccmImage); got != want {
			t.Errorf("%s: %v, want %v", img, got, want)
		}
	}
}

func TestJSONPatchAndStrategicMerge(t *testing.T) {
	doc := obj{"a": []any{"x", "y"}, "m": obj{"k": "v"}}

	got, err := applyJSONPatch(copyObj(doc), []any{
		obj{"op": "add", "path": "/a/1", "value": "z"},
		obj{"op": "remove", "path": "/m/k"},
		obj{"op": "test", "path": "/a/0", "value": "x"},
		obj{"op": "copy", "from": "/a/2", "path": "/m/c"},
	})
	if err != nil {
		t.Fatal(err)
	}

	if want := (obj{"a": []any{"x", "z", "y"}, "m": obj{"c": "y"}}); !equal(got, want) {
		t.Fatalf("json patch = %v, want %v", got, want)
	}

	if _, err := applyJSONPatch(copyObj(doc), []any{obj{"op": "replace", "path": "/missing", "value": 1}}); err == nil {
		t.Fatal("replace of a missing path succeeded")
	}

	target := obj{"metadata": obj{"finalizers": []any{"a"}}, "spec": obj{"tolerations": []any{obj{"key": "a"}}, "ports": []any{obj{"port": "80", "name": "http"}}}}
	patch := obj{"metadata": obj{"finalizers": []any{"b"}}, "spec": obj{"tolerations": []any{obj{"key": "b"}}, "ports": []any{obj{"port": "443", "name": "https"}}}}

	want := obj{
		"metadata": obj{"finalizers": []any{"a", "b"}},
		"spec":     obj{"tolerations": []any{obj{"key": "b"}}, "ports": []any{obj{"port": "80", "name": "http"}, obj{"port": "443", "name": "https"}}},
	}
	if got := strategicMerge(target, patch, ""); !equal(got, want) {
		t.Fatalf("strategic merge = %v, want %v", got, want)
	}
}

func TestNameProblem(t *testing.T) {
	rbac := resource{group: "rbac.authorization.k8s.io", name: "clusterroles"}
	ns := resource{name: "namespaces"}
	cm := resource{name: "configmaps"}
	for _, tc := range []struct {
		r    resource
		name string
		ok   bool
	}{
		{rbac, "system:hcloud-cloud-controller-manager", true},
		{rbac, "a/b", false},
		{rbac, "..", false},
		{ns, "kube-system", true},
		{ns, "a.b", false},
		{cm, "a.b", true},
		{cm, "system:x", false},
		{cm, "Upper", false},
	} {
		if got := nameProblem(tc.r, tc.name) == ""; got != tc.ok {
			t.Errorf("%s %q: valid = %v, want %v", tc.r.name, tc.name, got, tc.ok)
		}
	}
}

func TestSizeGB(t *testing.T) {
	for q, want := range map[string]int{"10Gi": 10, "1Gi": 10, "25Gi": 25, "20G": 19, "21G": 20, "1Ti": 1024, "500Mi": 10, "bogus": 10} {
		if got := sizeGB(q); got != want {
			t.Errorf("sizeGB(%q) = %d, want %d", q, got, want)
		}
	}
}
