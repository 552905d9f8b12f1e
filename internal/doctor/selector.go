package doctor

import (
	"fmt"
	"strings"
)

// labelRequirement is one term of a Hetzner label selector.
type labelRequirement struct {
	key    string
	op     string // "=", "!=", "exists", "!exists", "in", "notin"
	values []string
}

// parseSelector parses Hetzner's label selector syntax: `k=v`, `k==v`,
// `k!=v`, `k`, `!k`, `k in (a,b)`, `k notin (a,b)`, terms joined by commas
// (AND). See https://docs.hetzner.cloud/#label-selector.
func parseSelector(s string) ([]labelRequirement, error) {
	var terms []string
	depth, start := 0, 0
	for i, r := range s {
		switch r {
		case '(':
			depth++
		case ')':
			depth--
		case ',':
			if depth == 0 {
				terms = append(terms, s[start:i])
				start = i + 1
			}
		}
	}
	terms = append(terms, s[start:])
	var reqs []labelRequirement
	for _, t := range terms {
		t = strings.TrimSpace(t)
		if t == "" {
			continue
		}
		r, err := parseTerm(t)
		if err != nil {
			return nil, fmt.Errorf("label selector %q: %w", s, err)
		}
		reqs = append(reqs, r)
	}
	return reqs, nil
}

func parseTerm(t string) (labelRequirement, error) {
	for _, op := range []string{" notin ", " in "} {
		if i := strings.Index(t, op); i > 0 {
			rest := strings.TrimSpace(t[i+len(op):])
			if !strings.HasPrefix(rest, "(") || !strings.HasSuffix(rest, ")") {
				return labelRequirement{}, fmt.Errorf("term %q: expected a parenthesised list", t)
			}
			var vals []string
			for _, v := range strings.Split(rest[1:len(rest)-1], ",") {
				vals = append(vals, strings.TrimSpace(v))
			}
			return labelRequirement{key: strings.TrimSpace(t[:i]), op: strings.TrimSpace(op), values: vals}, nil
		}
	}
	switch {
	case strings.Contains(t, "!="):
		k, v, _ := strings.Cut(t, "!=")
		return labelRequirement{key: strings.TrimSpace(k), op: "!=", values: []string{strings.TrimSpace(v)}}, nil
	case strings.Contains(t, "=="):
		k, v, _ := strings.Cut(t, "==")
		return labelRequirement{key: strings.TrimSpace(k), op: "=", values: []string{strings.TrimSpace(v)}}, nil
	case strings.Contains(t, "="):
		k, v, _ := strings.Cut(t, "=")
		return labelRequirement{key: strings.TrimSpace(k), op: "=", values: []string{strings.TrimSpace(v)}}, nil
	case strings.HasPrefix(t, "!"):
		return labelRequirement{key: strings.TrimSpace(t[1:]), op: "!exists"}, nil
	default:
		return labelRequirement{key: t, op: "exists"}, nil
	}
}

// matchSelector reports whether labels satisfy every requirement.
func matchSelector(reqs []labelRequirement, labels map[string]string) bool {
	for _, r := range reqs {
		v, ok := labels[r.key]
		switch r.op {
		case "=":
			if !ok || v != r.values[0] {
				return false
			}
		case "!=":
			if ok && v == r.values[0] {
				return false
			}
		case "exists":
			if !ok {
				return false
			}
		case "!exists":
			if ok {
				return false
			}
		case "in":
			if !ok || !containsExact(r.values, v) {
				return false
			}
		case "notin":
			if ok && containsExact(r.values, v) {
				return false
			}
		}
	}
	return true
}

func containsExact(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}
