package kubefake

import (
	"slices"
	"strings"
)

// mergeKeys are the patchMergeKey tags of the Kubernetes API types for the
// lists a strategic merge patch merges by key (k8s.io/api core/v1 types.go:
// Containers, EnvVar, Volume, VolumeMount, ContainerPort, ServicePort, ...);
// every other list is replaced, as lists without patchStrategy=merge are.
var mergeKeys = map[string]string{
	"containers":                "name",
	"initContainers":            "name",
	"ephemeralContainers":       "name",
	"env":                       "name",
	"volumes":                   "name",
	"volumeMounts":              "mountPath",
	"volumeDevices":             "devicePath",
	"imagePullSecrets":          "name",
	"conditions":                "type",
	"ownerReferences":           "uid",
	"hostAliases":               "ip",
	"topologySpreadConstraints": "topologyKey",
	"resourceClaims":            "name",
}

// primitiveMergeLists are lists of scalars with patchStrategy=merge.
var primitiveMergeLists = map[string]bool{"finalizers": true}

// strategicMerge applies a strategic merge patch value to target; field is
// the name of the field holding them (selects the list merge key).
func strategicMerge(target, patch any, field string) any {
	switch p := patch.(type) {
	case map[string]any:
		if str(p, "$patch") == "replace" {
			c := copyObj(p)
			delete(c, "$patch")

			return c
		}

		tm, ok := target.(map[string]any)
		if !ok {
			tm = map[string]any{}
		}

		for k, v := range p {
			switch {
			case strings.HasPrefix(k, "$deleteFromPrimitiveList/"):
				name := strings.TrimPrefix(k, "$deleteFromPrimitiveList/")
				tm[name] = slices.DeleteFunc(slices.Clone(listAt(tm, name)), func(e any) bool { return slices.ContainsFunc(asList(v), func(d any) bool { return equal(d, e) }) })
			case strings.HasPrefix(k, "$"):
				// $setElementOrder, $retainKeys: ordering and pruning hints, not modelled.
			case v == nil:
				delete(tm, k)
			case isDeleteDirective(v):
				delete(tm, k)
			default:
				tm[k] = strategicMerge(tm[k], v, k)
			}
		}

		return tm
	case []any:
		return mergeList(target, p, field)
	default:
		return deepCopy(patch)
	}
}

func asList(v any) []any {
	l, _ := v.([]any) //nolint:errcheck // nil when not a list

	return l
}

func isDeleteDirective(v any) bool {
	m, ok := v.(map[string]any)

	return ok && len(m) == 1 && str(m, "$patch") == "delete"
}

func mergeList(target any, patch []any, field string) any {
	tl := asList(target)

	if primitiveMergeLists[field] {
		out := slices.Clone(tl)
		for _, v := range patch {
			if !slices.ContainsFunc(out, func(e any) bool { return equal(e, v) }) {
				out = append(out, v)
			}
		}

		return out
	}

	key := mergeKeys[field]
	if field == "ports" {
		key = "containerPort"
		if len(patch) > 0 && nested(patch[0], "containerPort") == nil {
			key = "port"
		}
	}

	if key == "" {
		return deepCopy(patch)
	}

	out := make([]any, 0, len(tl)+len(patch))
	for _, e := range tl {
		out = append(out, deepCopy(e))
	}

	for _, pe := range patch {
		pm, ok := pe.(map[string]any)
		if !ok {
			continue
		}

		if str(pm, "$patch") == "replace" {
			return deepCopy(slices.DeleteFunc(slices.Clone(patch), func(e any) bool { return str(e, "$patch") == "replace" }))
		}

		i := slices.IndexFunc(out, func(e any) bool { return equal(nested(e, key), pm[key]) })

		switch {
		case str(pm, "$patch") == "delete":
			if i >= 0 {
				out = slices.Delete(out, i, i+1)
			}
		case i >= 0:
			out[i] = strategicMerge(out[i], pm, "")
		default:
			out = append(out, strategicMerge(nil, pm, ""))
		}
	}

	return out
}
