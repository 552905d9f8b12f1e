package kubefake

import (
	"fmt"
	"slices"
	"strings"
)

// requirement is one term of a label selector.
type requirement struct {
	key, op string // op: =, !=, in, notin, exists, !
	values  []string
}

type labelSelector []requirement

// parseLabelSelector reads the label selector syntax of ?labelSelector=.
func parseLabelSelector(s string) (labelSelector, error) {
	var out labelSelector

	for _, term := range splitTerms(s) {
		term = strings.TrimSpace(term)
		if term == "" {
			continue
		}

		req, err := parseRequirement(term)
		if err != nil {
			return nil, err
		}

		out = append(out, req)
	}

	return out, nil
}

func splitTerms(s string) []string {
	var out []string

	depth, start := 0, 0

	for i, c := range s {
		switch c {
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

func parseRequirement(t string) (requirement, error) {
	if strings.HasPrefix(t, "!") {
		return requirement{key: strings.TrimSpace(t[1:]), op: "!"}, nil
	}

	for _, op := range []string{" notin ", " in "} {
		if i := strings.Index(t, op); i > 0 {
			vals := strings.TrimSpace(t[i+len(op):])
			if !strings.HasPrefix(vals, "(") || !strings.HasSuffix(vals, ")") {
				return requirement{}, errBadRequest(fmt.Sprintf("unable to parse requirement: found '%s', expected: '('", vals))
			}

			var vs []string
			for _, v := range strings.Split(vals[1:len(vals)-1], ",") {
				vs = append(vs, strings.TrimSpace(v))
			}

			return requirement{key: strings.TrimSpace(t[:i]), op: strings.TrimSpace(op), values: vs}, nil
		}
	}

	for _, op := range []string{"!=", "==", "="} {
		if i := strings.Index(t, op); i > 0 {
			norm := "="
			if op == "!=" {
				norm = "!="
			}

			return requirement{key: strings.TrimSpace(t[:i]), op: norm, values: []string{strings.TrimSpace(t[i+len(op):])}}, nil
		}
	}

	return requirement{key: t, op: "exists"}, nil
}

func (sel labelSelector) matches(labels map[string]string) bool {
	for _, r := range sel {
		v, has := labels[r.key]

		ok := false

		switch r.op {
		case "=":
			ok = has && v == r.values[0]
		case "!=":
			ok = !has || v != r.values[0]
		case "in":
			ok = has && slices.Contains(r.values, v)
		case "notin":
			ok = !has || !slices.Contains(r.values, v)
		case "exists":
			ok = has
		case "!":
			ok = !has
		}

		if !ok {
			return false
		}
	}

	return true
}

// fieldTerm is one term of a field selector.
type fieldTerm struct {
	path  []string
	value string
	neq   bool
}

// supportedFields are the field labels kube-apiserver accepts beyond
// metadata.name and metadata.namespace (the resources' field label
// conversion functions).
var supportedFields = map[string][]string{
	"/pods":    {"spec.nodeName", "spec.restartPolicy", "spec.schedulerName", "spec.serviceAccountName", "spec.hostNetwork", "status.phase", "status.podIP", "status.nominatedNodeName"},
	"/nodes":   {"spec.unschedulable"},
	"/secrets": {"type"},
	"/events":  {"involvedObject.kind", "involvedObject.namespace", "involvedObject.name", "involvedObject.uid", "involvedObject.apiVersion", "involvedObject.resourceVersion", "involvedObject.fieldPath", "reason", "reportingComponent", "source", "type"},
}

func parseFieldSelector(r resource, s string) ([]fieldTerm, error) {
	var out []fieldTerm

	for _, t := range strings.Split(s, ",") {
		if t = strings.TrimSpace(t); t == "" {
			continue
		}

		ft := fieldTerm{}
		key := ""

		switch {
		case strings.Contains(t, "!="):
			i := strings.Index(t, "!=")
			key, ft.value, ft.neq = t[:i], t[i+2:], true
		case strings.Contains(t, "=="):
			i := strings.Index(t, "==")
			key, ft.value = t[:i], t[i+2:]
		case strings.Contains(t, "="):
			i := strings.Index(t, "=")
			key, ft.value = t[:i], t[i+1:]
		default:
			return nil, errBadRequest(fmt.Sprintf("invalid selector: '%s'; can't understand '%s'", s, t))
		}

		if key != "metadata.name" && key != "metadata.namespace" && !slices.Contains(supportedFields[r.key()], key) {
			return nil, errBadRequest(fmt.Sprintf("field label not supported: %s", key))
		}

		ft.path = strings.Split(key, ".")
		out = append(out, ft)
	}

	return out, nil
}

func fieldsMatch(terms []fieldTerm, o obj) bool {
	for _, t := range terms {
		v := fmt.Sprint(nested(o, t.path...))
		if nested(o, t.path...) == nil {
			v = ""
		}

		if (v == t.value) == t.neq {
			return false
		}
	}

	return true
}

// selectorFromLabelSelector turns a metav1.LabelSelector object
// (matchLabels, matchExpressions) into requirements; nil matches nothing,
// an empty selector everything.
func selectorFromObject(sel map[string]any) (labelSelector, bool) {
	if sel == nil {
		return nil, false
	}

	var out labelSelector

	for k, v := range mapAt(sel, "matchLabels") {
		s, _ := v.(string) //nolint:errcheck // non-strings never match
		out = append(out, requirement{key: k, op: "=", values: []string{s}})
	}

	for _, e := range listAt(sel, "matchExpressions") {
		req := requirement{key: str(e, "key")}

		switch str(e, "operator") {
		case "In":
			req.op = "in"
		case "NotIn":
			req.op = "notin"
		case "Exists":
			req.op = "exists"
		case "DoesNotExist":
			req.op = "!"
		}

		for _, v := range listAt(e, "values") {
			s, _ := v.(string) //nolint:errcheck // non-strings never match
			req.values = append(req.values, s)
		}

		out = append(out, req)
	}

	return out, true
}
