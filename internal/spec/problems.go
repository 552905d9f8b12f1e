package spec

import (
	"errors"
	"fmt"
	"strings"

	"go.yaml.in/yaml/v3"
)

// Problem is one thing wrong with a spec: the field path, why, and the fix.
type Problem struct {
	Field  string `json:"field"`
	Reason string `json:"reason"`
	Fix    string `json:"fix"`
}

func (p Problem) String() string {
	s := p.Field + ": " + p.Reason
	if p.Fix != "" {
		s += " (fix: " + p.Fix + ")"
	}
	return s
}

// Problems is every problem found at once; it is an error.
type Problems []Problem

func (ps Problems) Error() string {
	lines := make([]string, 0, len(ps)+1)
	lines = append(lines, fmt.Sprintf("the spec has %d problem(s):", len(ps)))
	for i, p := range ps {
		if i == maxReported {
			lines = append(lines, fmt.Sprintf("  - and %d more", len(ps)-maxReported))
			break
		}
		lines = append(lines, "  - "+p.String())
	}
	return strings.Join(lines, "\n")
}

// Has reports whether a problem names field.
func (ps Problems) Has(field string) bool {
	for _, p := range ps {
		if p.Field == field {
			return true
		}
	}
	return false
}

// decodeReporting decodes data into a Spec and returns every unknown key
// and every value of the wrong type as problems instead of stopping at the
// first, so that a typo never hides the spec's other problems. err is set
// only when data is not YAML at all.
func decodeReporting(data []byte) (*Spec, Problems, error) {
	s, _, ps, err := decodeTree(data)
	return s, ps, err
}

// decodeTree is decodeReporting that also returns the YAML tree.
func decodeTree(data []byte) (*Spec, *yaml.Node, Problems, error) {
	root, err := oneDocument(data)
	if err != nil {
		return nil, nil, nil, err
	}
	if err := duplicateKeys(root); err != nil {
		return nil, nil, nil, err
	}
	ps := unknownKeys(root)
	s := &Spec{}
	if len(root.Content) == 0 {
		return s, root, ps, nil
	}
	// yaml.v3 decodes what it can and lists every mismatch in one
	// TypeError, leaving the mismatched fields empty.
	err = root.Decode(s)
	var te *yaml.TypeError
	switch {
	case errors.As(err, &te):
		ps = append(ps, typeProblems(te)...)
	case err != nil:
		return nil, nil, nil, fmt.Errorf("spec has a value of the wrong type: %w", err)
	}
	return s, root, ps, nil
}

// typeProblems turns yaml.v3's "line N: cannot unmarshal ..." messages
// into problems that name the line.
func typeProblems(te *yaml.TypeError) Problems {
	ps := make(Problems, 0, len(te.Errors))
	for _, e := range te.Errors {
		field, reason, ok := strings.Cut(e, ": ")
		if !ok || !strings.HasPrefix(field, "line ") {
			field, reason = "spec", e
		}
		ps = append(ps, Problem{
			Field:  field,
			Reason: "a value of the wrong type (" + reason + ")",
			Fix:    "write the kind of value docs/spec.md gives for this key (a number, a string, a list or a map)",
		})
	}
	return ps
}

// explicitZeroProblems reports values the spec states as 0 where Default
// would silently replace 0 with a default: "controlPlane: {count: 0}" must
// be reported, not turned into three servers.
func explicitZeroProblems(root *yaml.Node) Problems {
	if len(root.Content) == 0 {
		return nil
	}
	v := mappingValue(mappingValue(root.Content[0], "controlPlane"), "count")
	if v == nil || v.Kind != yaml.ScalarNode {
		return nil
	}
	var n int
	if v.Decode(&n) != nil || n != 0 {
		return nil
	}
	return Problems{{
		Field:  "controlPlane.count",
		Reason: fmt.Sprintf("0 control planes (line %d): a cluster needs at least one", v.Line),
		Fix:    "use an odd number: 3 for high availability (1 for a throwaway cluster), or omit the key for 3",
	}}
}

// mappingValue is the value of key in mapping node n, or nil.
func mappingValue(n *yaml.Node, key string) *yaml.Node {
	if n == nil || n.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == key {
			return n.Content[i+1]
		}
	}
	return nil
}
