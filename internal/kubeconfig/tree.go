package kubeconfig

import (
	"bytes"
	"errors"
	"fmt"

	"go.yaml.in/yaml/v3"
)

// tree is a kubeconfig as a YAML tree: editing it keeps the operator's
// comments and the order of keys and entries.
type tree struct {
	doc  *yaml.Node // the document node
	root *yaml.Node // its top-level mapping
}

// newTree is an empty kubeconfig.
func newTree() *tree {
	root := &yaml.Node{Kind: yaml.MappingNode}
	t := &tree{doc: &yaml.Node{Kind: yaml.DocumentNode, Content: []*yaml.Node{root}}, root: root}
	t.setScalar("apiVersion", "v1")
	t.setScalar("kind", "Config")
	return t
}

// parseTree parses a kubeconfig file; an empty file is an empty config.
func parseTree(b []byte) (*tree, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(b, &doc); err != nil {
		return nil, err
	}
	if len(doc.Content) == 0 {
		return newTree(), nil
	}
	root := doc.Content[0]
	if root.Kind != yaml.MappingNode {
		return nil, errors.New("the top level is not a mapping")
	}
	return &tree{doc: &doc, root: root}, nil
}

// value is the value node of key, or nil.
func (t *tree) value(key string) *yaml.Node {
	for i := 0; i+1 < len(t.root.Content); i += 2 {
		if t.root.Content[i].Value == key {
			return t.root.Content[i+1]
		}
	}
	return nil
}

// set makes v the value of key, appending the key when it is new.
func (t *tree) set(key string, v *yaml.Node) {
	for i := 0; i+1 < len(t.root.Content); i += 2 {
		if t.root.Content[i].Value == key {
			t.root.Content[i+1] = v
			return
		}
	}
	t.root.Content = append(t.root.Content, &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: key}, v)
}

// scalar is the string value of key ("" when absent or not a scalar).
func (t *tree) scalar(key string) string {
	if v := t.value(key); v != nil && v.Kind == yaml.ScalarNode {
		return v.Value
	}
	return ""
}

// setScalar sets key to the string s, keeping the key's comments.
func (t *tree) setScalar(key, s string) {
	if v := t.value(key); v != nil && v.Kind == yaml.ScalarNode {
		v.Tag, v.Value, v.Style = "!!str", s, 0
		return
	}
	t.set(key, &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: s})
}

// list is the sequence under key, created when absent or null.
func (t *tree) list(key string) (*yaml.Node, error) {
	v := t.value(key)
	switch {
	case v == nil || (v.Kind == yaml.ScalarNode && v.Tag == "!!null"):
		seq := &yaml.Node{Kind: yaml.SequenceNode, Tag: "!!seq"}
		t.set(key, seq)
		return seq, nil
	case v.Kind != yaml.SequenceNode:
		return nil, fmt.Errorf("%s is not a list (line %d): fix it or use --out", key, v.Line)
	}
	v.Style &^= yaml.FlowStyle // a flow list would put new entries on one line
	return v, nil
}

// encode writes the tree as YAML with two-space indentation.
func (t *tree) encode() ([]byte, error) {
	var b bytes.Buffer
	enc := yaml.NewEncoder(&b)
	enc.SetIndent(2)
	if err := enc.Encode(t.doc); err != nil {
		return nil, err
	}
	if err := enc.Close(); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// nameFirst moves the "name" key of an encoded entry to the front, where
// kubectl writes it (maps encode with sorted keys).
func nameFirst(m *yaml.Node) {
	for i := 2; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == "name" {
			k, v := m.Content[i], m.Content[i+1]
			copy(m.Content[2:i+2], m.Content[0:i])
			m.Content[0], m.Content[1] = k, v
			return
		}
	}
}
