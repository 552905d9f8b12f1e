// Package addons describes the in-cluster add-ons ohmytalos installs after
// bootstrap (Cilium, the Hetzner cloud controller and CSI driver, Longhorn,
// metrics-server, the Traefik ingress): the pinned upstream chart of each
// and the Helm values ohmytalos sets on it (charts.go, values*.go), and
// the few typed objects no chart renders (the hcloud Secret, the longhorn
// Namespace, the Cilium metadata policy, talos-backup), written from the
// facts of the upstream repositories, never copied from them. Rendering is
// pure and deterministic: the same spec and inputs give the same bytes.
package addons

import (
	"fmt"
	"maps"
	"sort"
	"strings"
)

// Labels every rendered object carries: pruning selects on them.
const (
	LabelManagedBy = "app.kubernetes.io/managed-by"
	ManagedBy      = "ohmytalos"
	LabelAddon     = "ohmytalos.io/addon"
)

// Object is one Kubernetes object as its JSON/YAML tree.
type Object map[string]any

// newObject starts an object with its type and metadata.
func newObject(apiVersion, kind, namespace, name string) Object {
	md := map[string]any{"name": name}
	if namespace != "" {
		md["namespace"] = namespace
	}
	return Object{"apiVersion": apiVersion, "kind": kind, "metadata": md}
}

func (o Object) str(k string) string {
	s, _ := o[k].(string)
	return s
}

func (o Object) meta() map[string]any {
	m, _ := o["metadata"].(map[string]any)
	return m
}

// APIVersion is the object's apiVersion.
func (o Object) APIVersion() string { return o.str("apiVersion") }

// Kind is the object's kind.
func (o Object) Kind() string { return o.str("kind") }

// Name is metadata.name.
func (o Object) Name() string { s, _ := o.meta()["name"].(string); return s }

// Namespace is metadata.namespace ("" for cluster-scoped objects).
func (o Object) Namespace() string { s, _ := o.meta()["namespace"].(string); return s }

// Ref names the object: "Kind/namespace/name" or "Kind/name".
func (o Object) Ref() string {
	if ns := o.Namespace(); ns != "" {
		return o.Kind() + "/" + ns + "/" + o.Name()
	}
	return o.Kind() + "/" + o.Name()
}

// setLabels merges labels into metadata.labels.
func (o Object) setLabels(l map[string]string) {
	md := o.meta()
	cur, _ := md["labels"].(map[string]any)
	if cur == nil {
		cur = map[string]any{}
	}
	for k, v := range l {
		cur[k] = v
	}
	md["labels"] = cur
}

// with sets a top-level field and returns the object, for chaining.
func (o Object) with(k string, v any) Object {
	o[k] = v
	return o
}

// m is shorthand for a JSON object.
type m = map[string]any

// l is shorthand for a JSON list.
type l = []any

// strs converts strings to a JSON list.
func strs(s ...string) l {
	out := make(l, len(s))
	for i, v := range s {
		out[i] = v
	}
	return out
}

// labelMap converts a string map to a JSON object.
func labelMap(kv ...string) m {
	out := m{}
	for i := 0; i+1 < len(kv); i += 2 {
		out[kv[i]] = kv[i+1]
	}
	return out
}

// env builds a container env list from name/value pairs.
func env(kv ...string) l {
	out := l{}
	for i := 0; i+1 < len(kv); i += 2 {
		out = append(out, m{"name": kv[i], "value": kv[i+1]})
	}
	return out
}

func fieldEnv(name, path string) m {
	return m{"name": name, "valueFrom": m{"fieldRef": m{"apiVersion": "v1", "fieldPath": path}}}
}

func secretEnv(name, secret, key string) m {
	return m{"name": name, "valueFrom": m{"secretKeyRef": m{"name": secret, "key": key}}}
}

func hostPathVolume(name, path, typ string) m {
	hp := m{"path": path}
	if typ != "" {
		hp["type"] = typ
	}
	return m{"name": name, "hostPath": hp}
}

func mount(name, path string) m { return m{"name": name, "mountPath": path} }

// rule is one RBAC policy rule.
func rule(groups, resources, verbs []string) m {
	return m{"apiGroups": strs(groups...), "resources": strs(resources...), "verbs": strs(verbs...)}
}

var (
	read  = []string{"get", "list", "watch"}
	write = []string{"get", "list", "watch", "create", "update", "patch", "delete"}
)

// serviceAccount, clusterRole and clusterRoleBinding are the RBAC trio each
// add-on needs.
func serviceAccount(ns, name string) Object { return newObject("v1", "ServiceAccount", ns, name) }

func clusterRole(name string, rules ...m) Object {
	rs := make(l, len(rules))
	for i, r := range rules {
		rs[i] = r
	}
	return newObject("rbac.authorization.k8s.io/v1", "ClusterRole", "", name).with("rules", rs)
}

func clusterRoleBinding(name, role, ns, sa string) Object {
	return newObject("rbac.authorization.k8s.io/v1", "ClusterRoleBinding", "", name).
		with("roleRef", m{"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": role}).
		with("subjects", l{m{"kind": "ServiceAccount", "name": sa, "namespace": ns}})
}

// kubePrism is Talos' local API server proxy on every node (field notes:
// nothing in the cluster depends on the VIP).
const (
	kubePrismHost = "localhost"
	kubePrismPort = "7445"
)

// sortedKeys returns a map's keys in order.
func sortedKeys[V any](mp map[string]V) []string {
	out := make([]string, 0, len(mp))
	for k := range mp {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// image joins a repository and a tag.
func image(repo, version string) string {
	return fmt.Sprintf("%s:%s", repo, strings.TrimSpace(version))
}

// Label is the value of the label key ("" when absent).
func (o Object) Label(key string) string {
	l, _ := o.meta()["labels"].(map[string]any)
	s, _ := l[key].(string)
	return s
}

// workload is an apps/v1 kind (Deployment, DaemonSet) named name in ns:
// its selector matches sel and its pod template carries sel; extra are
// the spec's other fields (replicas, strategy) and pod is the pod spec.
func workload(kind, ns, name string, sel, extra, pod m) Object {
	spec := m{"selector": m{"matchLabels": sel}, "template": m{"metadata": m{"labels": sel}, "spec": pod}}
	maps.Copy(spec, extra)
	return newObject("apps/v1", kind, ns, name).with("spec", spec)
}
