package hcloudfake

import (
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"
)

// Label rules of Hetzner's API description ("Labels"): a key is an optional
// prefix (a DNS subdomain of at most 253 characters) and a slash, then a
// name of 1-63 characters that begins and ends with [a-z0-9A-Z] and has
// dashes, underscores, dots and alphanumerics between; a value is empty or
// follows the same pattern as the name. The prefix "hetzner.cloud/" is
// reserved. hcloud-go v2.52.0 checks the same patterns client-side
// (hcloud/labels.go, keyRegexp and valueRegexp).
var (
	labelName   = regexp.MustCompile(`^[a-zA-Z0-9]([-_.a-zA-Z0-9]{0,61}[a-zA-Z0-9])?$`)
	labelValue  = regexp.MustCompile(`^([a-zA-Z0-9]([-_.a-zA-Z0-9]{0,61}[a-zA-Z0-9])?)?$`)
	dnsLabel    = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$`)
	reservedPre = "hetzner.cloud"
)

// labelKeyProblem explains why k is not a valid label key ("" when it is).
func labelKeyProblem(k string) string {
	prefix, name, hasPrefix := strings.Cut(k, "/")
	if !hasPrefix {
		prefix, name = "", k
	}
	if !labelName.MatchString(name) {
		return "the name part must be 1-63 characters, begin and end with a letter or digit, with only -, _ and . between"
	}
	if !hasPrefix {
		return ""
	}
	if prefix == reservedPre {
		return "the prefix hetzner.cloud/ is reserved"
	}
	if prefix == "" || len(prefix) > 253 {
		return "the prefix must be a DNS subdomain of 1-253 characters"
	}
	for _, part := range strings.Split(prefix, ".") {
		if !dnsLabel.MatchString(part) {
			return "the prefix must be a DNS subdomain (lowercase labels separated by dots)"
		}
	}
	return ""
}

// checkLabels validates label keys and values as Hetzner does, answering
// invalid_input with the offending label named in the field details.
func checkLabels(labels map[string]string) error {
	for _, k := range slices.Sorted(maps.Keys(labels)) {
		if why := labelKeyProblem(k); why != "" {
			return errInvalid("labels", fmt.Sprintf("label key %q is invalid: %s", k, why))
		}
		if v := labels[k]; !labelValue.MatchString(v) {
			return errInvalid("labels", fmt.Sprintf("label value %q of key %q is invalid: it must be empty or 1-63 characters that begin and end with a letter or digit, with only -, _ and . between", v, k))
		}
	}
	return nil
}

// selOp is an operator of Hetzner's label selector ("Label Selector" in
// the API description): k=v, k==v, k!=v, k, !k, k in (v1,v2), k notin (v1,v2).
type selOp int

const (
	selEq selOp = iota
	selNeq
	selHas
	selHasNot
	selIn
	selNotIn
)

// selTerm is one comma-separated expression of a selector.
type selTerm struct {
	key    string
	op     selOp
	values []string
}

// selector is a parsed label selector; every term must hold (comma is AND).
type selector []selTerm

// parseSelector parses a label selector as the API does; "" matches all.
func parseSelector(s string) (selector, error) {
	var out selector
	for _, raw := range splitTerms(s) {
		term := strings.TrimSpace(raw)
		if term == "" {
			if strings.TrimSpace(s) == "" {
				return nil, nil
			}
			return nil, fmt.Errorf("label selector %q has an empty expression", s)
		}
		t, err := parseTerm(term)
		if err != nil {
			return nil, fmt.Errorf("label selector %q: %w", s, err)
		}
		out = append(out, t)
	}
	return out, nil
}

// splitTerms splits at commas that are not inside parentheses.
func splitTerms(s string) []string {
	var out []string
	depth, start := 0, 0
	for i, r := range s {
		switch r {
		case '(':
			depth++
		case ')':
			depth--
		case ',':
			if depth == 0 {
				out = append(out, s[start:i])
				start = i + 1
			}
		}
	}
	return append(out, s[start:])
}

func parseTerm(term string) (selTerm, error) {
	if k, ok := strings.CutPrefix(term, "!"); ok {
		return keyTerm(strings.TrimSpace(k), selHasNot, nil)
	}
	for _, op := range []struct {
		sep string
		op  selOp
	}{{"!=", selNeq}, {"==", selEq}, {"=", selEq}} {
		if k, v, ok := strings.Cut(term, op.sep); ok {
			return keyTerm(strings.TrimSpace(k), op.op, []string{strings.TrimSpace(v)})
		}
	}
	fields := strings.Fields(term)
	if len(fields) == 1 {
		return keyTerm(fields[0], selHas, nil)
	}
	if len(fields) >= 2 && (fields[1] == "in" || fields[1] == "notin" ||
		strings.HasPrefix(fields[1], "in(") || strings.HasPrefix(fields[1], "notin(")) {
		rest := strings.TrimSpace(strings.TrimPrefix(term, fields[0]))
		op, list := selIn, strings.TrimPrefix(rest, "in")
		if strings.HasPrefix(rest, "notin") {
			op, list = selNotIn, strings.TrimPrefix(rest, "notin")
		}
		list = strings.TrimSpace(list)
		if !strings.HasPrefix(list, "(") || !strings.HasSuffix(list, ")") {
			return selTerm{}, fmt.Errorf("%q: the values of in and notin go in parentheses, e.g. k in (a,b)", term)
		}
		var values []string
		for _, v := range strings.Split(list[1:len(list)-1], ",") {
			values = append(values, strings.TrimSpace(v))
		}
		return keyTerm(fields[0], op, values)
	}
	return selTerm{}, fmt.Errorf("%q is not one of k=v, k==v, k!=v, k, !k, k in (..), k notin (..)", term)
}

func keyTerm(key string, op selOp, values []string) (selTerm, error) {
	if why := labelKeyProblem(key); why != "" {
		return selTerm{}, fmt.Errorf("key %q is invalid: %s", key, why)
	}
	for _, v := range values {
		if !labelValue.MatchString(v) {
			return selTerm{}, fmt.Errorf("value %q of key %q is not a valid label value", v, key)
		}
	}
	return selTerm{key: key, op: op, values: values}, nil
}

// matches reports whether labels satisfy every term.
func (sel selector) matches(labels map[string]string) bool {
	for _, t := range sel {
		v, ok := labels[t.key]
		var hold bool
		switch t.op {
		case selEq:
			hold = ok && v == t.values[0]
		case selNeq:
			hold = !ok || v != t.values[0]
		case selHas:
			hold = ok
		case selHasNot:
			hold = !ok
		case selIn:
			hold = ok && slices.Contains(t.values, v)
		case selNotIn:
			hold = !ok || !slices.Contains(t.values, v)
		}
		if !hold {
			return false
		}
	}
	return true
}
