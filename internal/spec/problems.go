package spec

import (
	"fmt"
	"strings"
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
	for _, p := range ps {
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
