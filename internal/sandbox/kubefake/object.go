package kubefake

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"strconv"
	"strings"
)

// obj is a Kubernetes object as unstructured JSON.
type obj = map[string]any

// decodeJSON reads JSON keeping integers exact (json.Number).
func decodeJSON(b []byte, into any) error {
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()

	if err := d.Decode(into); err != nil {
		return fmt.Errorf("decode JSON: %w", err)
	}

	return nil
}

// normalize turns any decoded value (YAML ints, Go structs) into what
// decodeJSON yields, so values compare equal whatever their source.
func normalize(v any) (any, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("encode JSON: %w", err)
	}

	var out any
	if err := decodeJSON(b, &out); err != nil {
		return nil, err
	}

	return out, nil
}

func deepCopy(v any) any {
	switch t := v.(type) {
	case map[string]any:
		m := make(map[string]any, len(t))
		for k, e := range t {
			m[k] = deepCopy(e)
		}

		return m
	case []any:
		l := make([]any, len(t))
		for i, e := range t {
			l[i] = deepCopy(e)
		}

		return l
	default:
		return v
	}
}

func copyObj(o obj) obj {
	if o == nil {
		return nil
	}

	m, _ := deepCopy(o).(obj) //nolint:errcheck // a map copies to a map

	return m
}

func equal(a, b any) bool { return reflect.DeepEqual(a, b) }

// nested returns the value at path, or nil.
func nested(o any, path ...string) any {
	cur := o
	for _, p := range path {
		m, ok := cur.(map[string]any)
		if !ok {
			return nil
		}

		cur = m[p]
	}

	return cur
}

func str(o any, path ...string) string {
	s, _ := nested(o, path...).(string) //nolint:errcheck // "" when absent

	return s
}

func mapAt(o any, path ...string) map[string]any {
	m, _ := nested(o, path...).(map[string]any) //nolint:errcheck // nil when absent

	return m
}

func listAt(o any, path ...string) []any {
	l, _ := nested(o, path...).([]any) //nolint:errcheck // nil when absent

	return l
}

func boolAt(o any, path ...string) bool {
	b, _ := nested(o, path...).(bool) //nolint:errcheck // false when absent

	return b
}

// intAt reads an integer field; ok is false when it is absent or not a number.
func intAt(o any, path ...string) (int64, bool) {
	return toInt(nested(o, path...))
}

func toInt(v any) (int64, bool) {
	switch t := v.(type) {
	case json.Number:
		i, err := t.Int64()

		return i, err == nil
	case float64:
		return int64(t), true
	case int:
		return int64(t), true
	case int64:
		return t, true
	}

	return 0, false
}

// set stores v at path, creating maps on the way.
func set(o obj, v any, path ...string) {
	cur := o

	for _, p := range path[:len(path)-1] {
		next, ok := cur[p].(map[string]any)
		if !ok {
			next = map[string]any{}
			cur[p] = next
		}

		cur = next
	}

	cur[path[len(path)-1]] = v
}

func num(i int64) json.Number { return json.Number(strconv.FormatInt(i, 10)) }

func strMap(o any, path ...string) map[string]string {
	out := map[string]string{}

	for k, v := range mapAt(o, path...) {
		if s, ok := v.(string); ok {
			out[k] = s
		}
	}

	return out
}

func meta(o obj) map[string]any {
	m := mapAt(o, "metadata")
	if m == nil {
		m = map[string]any{}
		o["metadata"] = m
	}

	return m
}

// dnsSubdomain reports whether s is a valid DNS-1123 subdomain (most object names).
func dnsSubdomain(s string) bool {
	if s == "" || len(s) > 253 {
		return false
	}

	for _, label := range strings.Split(s, ".") {
		if label == "" || label[0] == '-' || label[len(label)-1] == '-' {
			return false
		}

		for _, c := range label {
			if (c < 'a' || c > 'z') && (c < '0' || c > '9') && c != '-' {
				return false
			}
		}
	}

	return true
}

// nameProblem is why name is not a valid metadata.name for r, or "".
// kube-apiserver validates names per resource: RBAC objects take any path
// segment (k8s.io/apimachinery/pkg/api/validation/path
// ValidatePathSegmentName, used by pkg/apis/rbac/validation, so
// "system:controller:x" is valid), namespaces a DNS-1123 label, the rest a
// DNS-1123 subdomain. Nodes are left unchecked here (the kubelet names them).
func nameProblem(r resource, name string) string {
	switch {
	case r.name == "nodes":
		return ""
	case r.group == "rbac.authorization.k8s.io":
		if name == "." || name == ".." {
			return fmt.Sprintf("may not be '%s'", name)
		}
		if strings.ContainsAny(name, "/%") {
			return "may not contain '/' or '%'"
		}
		return ""
	case r.name == "namespaces":
		if len(name) > 63 || strings.Contains(name, ".") || !dnsSubdomain(name) {
			return "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character"
		}
		return ""
	case !dnsSubdomain(name):
		return "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character"
	}
	return ""
}
