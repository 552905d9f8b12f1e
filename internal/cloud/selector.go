package cloud

import (
	"fmt"
	"slices"
	"strings"
)

// selectorOp is the operator of one label selector requirement.
type selectorOp int

const (
	opEquals selectorOp = iota
	opNotEquals
	opExists
	opNotExists
	opIn
	opNotIn
)

// requirement is one comma-separated term of a label selector.
type requirement struct {
	key    string
	op     selectorOp
	values []string
}

// LabelSelector is a parsed Hetzner label selector: all requirements must hold.
// Hetzner documents the same operators as Kubernetes: k=v, k==v, k!=v, k, !k,
// k in (a,b), k notin (a,b); a comma is a logical AND.
type LabelSelector []requirement

// ParseSelector parses a label selector; the empty string matches everything.
func ParseSelector(s string) (LabelSelector, error) {
	terms, err := splitTopLevel(s)
	if err != nil {
		return nil, err
	}
	var sel LabelSelector
	for _, term := range terms {
		term = strings.TrimSpace(term)
		if term == "" {
			if len(terms) == 1 {
				return nil, nil
			}
			return nil, fmt.Errorf("label selector %q has an empty term", s)
		}
		req, err := parseRequirement(term)
		if err != nil {
			return nil, fmt.Errorf("label selector %q: %w", s, err)
		}
		sel = append(sel, req)
	}
	return sel, nil
}

// splitTopLevel splits at commas outside parentheses.
func splitTopLevel(s string) ([]string, error) {
	var out []string
	depth, start := 0, 0
	for i, r := range s {
		switch r {
		case '(':
			depth++
			if depth > 1 {
				return nil, fmt.Errorf("label selector %q has nested parentheses", s)
			}
		case ')':
			depth--
			if depth < 0 {
				return nil, fmt.Errorf("label selector %q has an unbalanced ')'", s)
			}
		case ',':
			if depth == 0 {
				out = append(out, s[start:i])
				start = i + 1
			}
		}
	}
	if depth != 0 {
		return nil, fmt.Errorf("label selector %q has an unclosed '('", s)
	}
	return append(out, s[start:]), nil
}

func parseRequirement(term string) (requirement, error) {
	if rest, ok := strings.CutPrefix(term, "!"); ok {
		key := strings.TrimSpace(rest)
		if err := CheckLabelKey(key); err != nil {
			return requirement{}, err
		}
		return requirement{key: key, op: opNotExists}, nil
	}
	for _, sep := range []struct {
		text string
		op   selectorOp
	}{{"!=", opNotEquals}, {"==", opEquals}, {"=", opEquals}} {
		if key, value, ok := strings.Cut(term, sep.text); ok {
			key, value = strings.TrimSpace(key), strings.TrimSpace(value)
			if err := CheckLabelKey(key); err != nil {
				return requirement{}, err
			}
			if strings.ContainsAny(value, "=!() ") {
				return requirement{}, fmt.Errorf("invalid value %q for key %q", value, key)
			}
			return requirement{key: key, op: sep.op, values: []string{value}}, nil
		}
	}
	fields := strings.Fields(term)
	if len(fields) == 1 {
		if err := CheckLabelKey(fields[0]); err != nil {
			return requirement{}, err
		}
		return requirement{key: fields[0], op: opExists}, nil
	}
	open := strings.Index(term, "(")
	if open < 0 || !strings.HasSuffix(term, ")") {
		return requirement{}, fmt.Errorf("cannot parse term %q: want k=v, k!=v, k, !k, k in (a,b) or k notin (a,b)", term)
	}
	head := strings.Fields(term[:open])
	if len(head) != 2 || (head[1] != "in" && head[1] != "notin") {
		return requirement{}, fmt.Errorf("cannot parse term %q: want \"key in (...)\" or \"key notin (...)\"", term)
	}
	if err := CheckLabelKey(head[0]); err != nil {
		return requirement{}, err
	}
	req := requirement{key: head[0], op: opIn}
	if head[1] == "notin" {
		req.op = opNotIn
	}
	for v := range strings.SplitSeq(term[open+1:len(term)-1], ",") {
		v = strings.TrimSpace(v)
		if v == "" {
			return requirement{}, fmt.Errorf("term %q has an empty value in its set", term)
		}
		req.values = append(req.values, v)
	}
	return req, nil
}

// CheckLabelKey rejects a label key with characters Hetzner does not allow.
func CheckLabelKey(key string) error {
	if key == "" {
		return fmt.Errorf("empty label key")
	}
	for _, r := range key {
		ok := r == '.' || r == '-' || r == '_' || r == '/' ||
			(r >= 'a' && r <= 'z') || (r >= 'A' && r <= 'Z') || (r >= '0' && r <= '9')
		if !ok {
			return fmt.Errorf("invalid label key %q", key)
		}
	}
	return nil
}

// Matches reports whether labels satisfy every requirement. As in Kubernetes,
// k!=v and k notin (...) also match objects without the label k.
func (s LabelSelector) Matches(labels map[string]string) bool {
	for _, req := range s {
		v, has := labels[req.key]
		var ok bool
		switch req.op {
		case opEquals:
			ok = has && v == req.values[0]
		case opNotEquals:
			ok = !has || v != req.values[0]
		case opExists:
			ok = has
		case opNotExists:
			ok = !has
		case opIn:
			ok = has && slices.Contains(req.values, v)
		case opNotIn:
			ok = !has || !slices.Contains(req.values, v)
		}
		if !ok {
			return false
		}
	}
	return true
}
