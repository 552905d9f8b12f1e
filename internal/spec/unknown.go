package spec

import (
	"fmt"
	"reflect"
	"sort"
	"strings"

	"github.com/agnivade/levenshtein"
	"go.yaml.in/yaml/v3"
)

// unknownKeys walks the YAML tree against the Spec type and reports every
// key the format does not define, so typos never pass silently.
func unknownKeys(root *yaml.Node) Problems {
	var ps Problems
	if len(root.Content) == 0 {
		return nil
	}
	walkKeys(root.Content[0], reflect.TypeOf(Spec{}), "", &ps)
	return ps
}

func walkKeys(n *yaml.Node, t reflect.Type, path string, ps *Problems) {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t == reflect.TypeOf(Patch{}) {
		return // a Talos patch: machinery's configpatcher checks its keys
	}
	switch t.Kind() {
	case reflect.Struct:
		if n.Kind != yaml.MappingNode {
			return // the decoder reports the type mismatch
		}
		fields := yamlFields(t)
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			ft, ok := fields[k.Value]
			p := join(path, k.Value)
			if !ok {
				*ps = append(*ps, Problem{
					Field:  p,
					Reason: fmt.Sprintf("unknown key (line %d)", k.Line),
					Fix:    suggest(k.Value, fields, path),
				})
				continue
			}
			walkKeys(v, ft, p, ps)
		}
	case reflect.Slice:
		if n.Kind != yaml.SequenceNode {
			return
		}
		for i, c := range n.Content {
			walkKeys(c, t.Elem(), fmt.Sprintf("%s[%d]", path, i), ps)
		}
	case reflect.Map:
		if n.Kind != yaml.MappingNode {
			return
		}
		for i := 0; i+1 < len(n.Content); i += 2 {
			walkKeys(n.Content[i+1], t.Elem(), join(path, n.Content[i].Value), ps)
		}
	}
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

func yamlFields(t reflect.Type) map[string]reflect.Type {
	out := map[string]reflect.Type{}
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		name := strings.Split(f.Tag.Get("yaml"), ",")[0]
		if name == "" || name == "-" {
			continue
		}
		out[name] = f.Type
	}
	return out
}

// suggest names the closest known key, or lists them all.
func suggest(key string, fields map[string]reflect.Type, path string) string {
	names := make([]string, 0, len(fields))
	best, bestD := "", 1<<30
	for name := range fields {
		names = append(names, name)
		d := levenshtein.ComputeDistance(strings.ToLower(key), strings.ToLower(name))
		if d < bestD || (d == bestD && name < best) {
			best, bestD = name, d
		}
	}
	if best != "" && bestD <= max(1, len(key)/3) {
		return fmt.Sprintf("did you mean %q?", join(path, best))
	}
	sort.Strings(names)
	return "remove it; known keys here: " + strings.Join(names, ", ")
}
