package charts

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
)

// SplitPath splits a dotted value path into keys; `\.` is a dot inside a
// key, as in helm's --set ("service.annotations.load-balancer\.hetzner\.cloud/location").
func SplitPath(p string) []string {
	var keys []string

	var b strings.Builder
	for i := 0; i < len(p); i++ {
		switch {
		case p[i] == '\\' && i+1 < len(p) && p[i+1] == '.':
			b.WriteByte('.')
			i++
		case p[i] == '.':
			keys = append(keys, b.String())
			b.Reset()
		default:
			b.WriteByte(p[i])
		}
	}

	return append(keys, b.String())
}

// Merge merges the operator's values (addons.NAME.values) over ours: the
// user wins; maps merge key by key, everything else (lists included) is
// replaced whole, as helm merges -f files. overridden lists the Required
// values of ours that the user's values change (for a plan warning).
func Merge(ours []Value, user map[string]any) (merged map[string]any, overridden []Value, err error) {
	base, err := Tree(ours)
	if err != nil {
		return nil, nil, err
	}

	u, err := normalize(user)
	if err != nil {
		return nil, nil, fmt.Errorf("addons values: %w", err)
	}

	for _, v := range ours {
		if !v.Required {
			continue
		}

		got, set := lookup(u, SplitPath(v.Path))
		if set && !reflect.DeepEqual(got, mustNormalize(v.Value)) {
			overridden = append(overridden, v)
		}
	}

	return deepMerge(base, u), overridden, nil
}

// Tree builds the nested values map of ours.
func Tree(ours []Value) (map[string]any, error) {
	out := map[string]any{}

	for _, v := range ours {
		keys := SplitPath(v.Path)

		val, err := normalize(v.Value)
		if err != nil {
			return nil, fmt.Errorf("value %s: %w", v.Path, err)
		}

		m := out
		for i, k := range keys[:len(keys)-1] {
			next, ok := m[k]
			if !ok {
				next = map[string]any{}
				m[k] = next
			}

			nm, ok := next.(map[string]any)
			if !ok {
				return nil, fmt.Errorf("value %s: %s is already set to a non-map value", v.Path, strings.Join(keys[:i+1], "."))
			}

			m = nm
		}

		last := keys[len(keys)-1]
		if _, dup := m[last]; dup {
			return nil, fmt.Errorf("value %s is set twice", v.Path)
		}

		m[last] = val
	}

	return out, nil
}

// lookup finds keys in m: set is true when the user's values decide that
// path, either with a value there or by replacing a parent with a
// non-map (which drops ours).
func lookup(m map[string]any, keys []string) (any, bool) {
	var cur any = m
	for _, k := range keys {
		cm, ok := cur.(map[string]any)
		if !ok {
			return cur, true
		}

		cur, ok = cm[k]
		if !ok {
			return nil, false
		}
	}

	return cur, true
}

// deepMerge returns dst with src merged over it (src wins; maps merge).
func deepMerge(dst, src map[string]any) map[string]any {
	out := make(map[string]any, len(dst)+len(src))
	for k, v := range dst {
		out[k] = v
	}

	for k, sv := range src {
		dm, dok := out[k].(map[string]any)
		sm, sok := sv.(map[string]any)

		if dok && sok {
			out[k] = deepMerge(dm, sm)
		} else {
			out[k] = sv
		}
	}

	return out
}

// normalize makes a value JSON-shaped (map[string]any, []any, float64,
// string, bool, nil), so values from Go code and from YAML compare equal
// and render as helm sees them.
func normalize[T any](v T) (T, error) {
	var zero T

	raw, err := json.Marshal(v)
	if err != nil {
		return zero, err
	}

	var out T
	if err := json.Unmarshal(raw, &out); err != nil {
		return zero, err
	}

	return out, nil
}

func mustNormalize(v any) any {
	n, err := normalize(v)
	if err != nil {
		return v
	}

	return n
}
