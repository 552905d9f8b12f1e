package talos

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"maps"
	"reflect"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"
)

// PathChange is one setting that differs between two machine configs.
type PathChange struct {
	// Path names the setting: the document ("v1alpha1", or KIND/NAME for
	// typed documents) then the keys, e.g.
	// `v1alpha1: machine.sysctls["net.core.somaxconn"]`.
	Path string
	// Old and New are the values as compact YAML ("" when absent).
	Old, New string
}

// DiffConfigs compares two machine configs (multi-document YAML) setting
// by setting, after redacting both (Redact), so no secret value appears in
// the result. Lists are compared whole.
func DiffConfigs(old, next []byte) ([]PathChange, error) {
	a, err := redactedDocs(old)
	if err != nil {
		return nil, fmt.Errorf("diff machine configs: the old config: %w", err)
	}

	b, err := redactedDocs(next)
	if err != nil {
		return nil, fmt.Errorf("diff machine configs: the new config: %w", err)
	}

	var out []PathChange

	for _, id := range unionKeys(a, b) {
		diffValue(id+": ", "", a[id], b[id], &out)
	}

	return out, nil
}

// redactedDocs decodes a redacted config into its documents by ID.
func redactedDocs(cfg []byte) (map[string]any, error) {
	red, err := Redact(cfg)
	if err != nil {
		return nil, err
	}

	docs := map[string]any{}
	dec := yaml.NewDecoder(bytes.NewReader(red))

	for {
		var d map[string]any

		err := dec.Decode(&d)
		if errors.Is(err, io.EOF) {
			return docs, nil
		}

		if err != nil {
			return nil, fmt.Errorf("decode: %w", err)
		}

		id := "v1alpha1"

		if kind, ok := d["kind"].(string); ok {
			id = kind
			if name, ok := d["name"].(string); ok {
				id += "/" + name
			}
		}

		docs[id] = d
	}
}

func unionKeys(a, b map[string]any) []string {
	seen := map[string]bool{}

	for k := range a {
		seen[k] = true
	}

	for k := range b {
		seen[k] = true
	}

	return slices.Sorted(maps.Keys(seen))
}

// diffValue appends the differences of a and b under path.
func diffValue(doc, path string, a, b any, out *[]PathChange) {
	am, aok := a.(map[string]any)
	bm, bok := b.(map[string]any)

	// A section present on one side only: name each setting in it.
	if aok && b == nil {
		bm, bok = map[string]any{}, true
	}

	if bok && a == nil {
		am, aok = map[string]any{}, true
	}

	if aok && bok {
		for _, k := range unionKeys(am, bm) {
			diffValue(doc, joinPath(path, k), am[k], bm[k], out)
		}

		return
	}

	if reflect.DeepEqual(a, b) {
		return
	}

	p := path
	if p == "" {
		p = "(document)"
	}

	*out = append(*out, PathChange{Path: doc + p, Old: compact(a), New: compact(b)})
}

// joinPath adds a key, bracketed when it holds a dot (sysctl names).
func joinPath(path, key string) string {
	if strings.ContainsAny(key, ". ") {
		return path + fmt.Sprintf("[%q]", key)
	}

	if path == "" {
		return key
	}

	return path + "." + key
}

// compact renders a value as one short line of YAML.
func compact(v any) string {
	if v == nil {
		return ""
	}

	var b bytes.Buffer

	enc := yaml.NewEncoder(&b)
	enc.SetIndent(2)

	if err := enc.Encode(flowStyle(v)); err != nil {
		return fmt.Sprint(v)
	}

	s := strings.TrimSpace(b.String())
	if len(s) > 80 {
		s = s[:77] + "..."
	}

	return s
}

// flowStyle wraps maps and lists in a flow-style node so they fit a line.
func flowStyle(v any) any {
	var n yaml.Node
	if err := n.Encode(v); err != nil {
		return v
	}

	var set func(*yaml.Node)
	set = func(n *yaml.Node) {
		if n.Kind == yaml.MappingNode || n.Kind == yaml.SequenceNode {
			n.Style = yaml.FlowStyle
		}

		for _, c := range n.Content {
			set(c)
		}
	}
	set(&n)

	return &n
}
