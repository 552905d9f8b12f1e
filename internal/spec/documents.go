package spec

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"

	"go.yaml.in/yaml/v3"
)

// oneDocument parses data as a YAML stream that holds one spec document.
// yaml.Unmarshal reads only the first document of a stream and drops the
// rest without a word, so the stream is read document by document here: a
// second document is an error naming its line. A document with nothing in
// it (a trailing "---", or one with only comments) is no document: YAML
// reads it as an empty null, and it holds no keys to lose. An empty stream
// is an empty document node.
func oneDocument(data []byte) (*yaml.Node, error) {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var doc *yaml.Node
	for {
		var n yaml.Node
		err := dec.Decode(&n)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("spec is not valid YAML: %w", err)
		}
		if emptyDocument(&n) {
			continue
		}
		if doc != nil {
			return nil, fmt.Errorf("line %d: a second YAML document: a spec file holds one, and the keys of a second would be ignored; "+
				"merge them into the first document (remove the \"---\" line before them) or move them to a file of their own", n.Line)
		}
		doc = &n
	}
	if doc == nil {
		return &yaml.Node{}, nil
	}
	return doc, nil
}

// emptyDocument reports whether document n has no content: yaml.v3 gives
// it a null scalar with no value, no tag written and no style (an explicit
// "~" or "null" has a value, "!!null" a style).
func emptyDocument(n *yaml.Node) bool {
	if len(n.Content) == 0 {
		return true
	}
	if len(n.Content) > 1 {
		return false
	}
	c := n.Content[0]
	return c.Kind == yaml.ScalarNode && c.Tag == "!!null" && c.Value == "" && c.Style == 0 && c.Anchor == ""
}

// duplicateKeys reports every key that appears more than once in one
// mapping, with the lines of each. yaml.v3 refuses such a mapping only
// while decoding it into a value ("mapping key ... already defined"),
// and then decodes none of it: the spec would report a value of the wrong
// type and the keys the mapping held as missing. The keys are compared as
// yaml.v3 compares them (node kind and value), so nothing it would refuse
// gets past.
func duplicateKeys(doc *yaml.Node) error {
	var lines []string
	walkMappings(doc, "", func(n *yaml.Node, path string) {
		for i := 0; i+1 < len(n.Content); i += 2 {
			k := n.Content[i]
			var again []string
			seen := false
			for j := 0; j < i; j += 2 {
				if sameKey(n.Content[j], k) {
					seen = true
					break
				}
			}
			if seen {
				continue // reported with its first occurrence
			}
			for j := i + 2; j+1 < len(n.Content); j += 2 {
				if sameKey(n.Content[j], k) {
					again = append(again, fmt.Sprint(n.Content[j].Line))
				}
			}
			switch len(again) {
			case 0:
			case 1:
				lines = append(lines, fmt.Sprintf("line %s: key %q appears twice (first at line %d); remove one", again[0], join(path, k.Value), k.Line))
			default:
				lines = append(lines, fmt.Sprintf("lines %s: key %q appears %d times (first at line %d); keep one", strings.Join(again, ", "), join(path, k.Value), len(again)+1, k.Line))
			}
		}
	})
	if len(lines) == 0 {
		return nil
	}
	return errors.New(strings.Join(lines, "\n"))
}

// sameKey is yaml.v3's test for a repeated mapping key.
func sameKey(a, b *yaml.Node) bool { return a.Kind == b.Kind && a.Value == b.Value }

// walkMappings calls fn with every mapping node under n and its field path
// (as the spec's problems name fields: a.b[2].c). An alias is not followed:
// its anchor is walked where it is defined.
func walkMappings(n *yaml.Node, path string, fn func(*yaml.Node, string)) {
	switch n.Kind {
	case yaml.DocumentNode:
		for _, c := range n.Content {
			walkMappings(c, path, fn)
		}
	case yaml.MappingNode:
		fn(n, path)
		for i := 0; i+1 < len(n.Content); i += 2 {
			walkMappings(n.Content[i+1], join(path, n.Content[i].Value), fn)
		}
	case yaml.SequenceNode:
		for i, c := range n.Content {
			walkMappings(c, fmt.Sprintf("%s[%d]", path, i), fn)
		}
	}
}
