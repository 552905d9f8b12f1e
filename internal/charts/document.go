package charts

import (
	"bytes"
	"fmt"

	"go.yaml.in/yaml/v3"
)

// Document is ours as a values file: YAML with each value's Why as a
// comment above it (`ohmytalos addons values NAME`). Values marked
// Required say so in their comment.
func Document(ours []Value) ([]byte, error) {
	root := &yaml.Node{Kind: yaml.MappingNode}

	for _, v := range ours {
		if err := place(root, SplitPath(v.Path), v); err != nil {
			return nil, err
		}
	}

	var b bytes.Buffer

	enc := yaml.NewEncoder(&b)
	enc.SetIndent(2)

	if err := enc.Encode(&yaml.Node{Kind: yaml.DocumentNode, Content: []*yaml.Node{root}}); err != nil {
		return nil, err
	}

	if err := enc.Close(); err != nil {
		return nil, err
	}

	return b.Bytes(), nil
}

// place puts v under keys in the mapping node m.
func place(m *yaml.Node, keys []string, v Value) error {
	for i, k := range keys {
		key, val := child(m, k)
		last := i == len(keys)-1

		if last {
			if val != nil {
				return fmt.Errorf("value %s is set twice", v.Path)
			}

			n := &yaml.Node{}
			if err := n.Encode(v.Value); err != nil {
				return fmt.Errorf("value %s: %w", v.Path, err)
			}

			key = &yaml.Node{Kind: yaml.ScalarNode, Value: k, HeadComment: comment(v)}
			m.Content = append(m.Content, key, n)

			return nil
		}

		if val == nil {
			key = &yaml.Node{Kind: yaml.ScalarNode, Value: k}
			val = &yaml.Node{Kind: yaml.MappingNode}
			m.Content = append(m.Content, key, val)
		}

		if val.Kind != yaml.MappingNode {
			return fmt.Errorf("value %s: its parent is already set to a non-map value", v.Path)
		}

		m = val
	}

	return nil
}

// child finds key k in the mapping node m.
func child(m *yaml.Node, k string) (key, val *yaml.Node) {
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == k {
			return m.Content[i], m.Content[i+1]
		}
	}

	return nil, nil
}

// comment is the "# why" above a value.
func comment(v Value) string {
	c := v.Why
	if v.Required {
		c += " (Talos on Hetzner needs it: overriding it gets a plan warning)"
	}

	return c
}
