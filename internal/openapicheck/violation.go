package openapicheck

import (
	"errors"
	"fmt"
	"regexp"
	"sort"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
)

// Sides of an exchange a violation is on.
const (
	SideRequest  = "request"
	SideResponse = "response"
)

// Kinds of violation.
const (
	KindUnknownOperation   = "unknown-operation"
	KindUndocumentedStatus = "undocumented-status"
	KindRequired           = "required"
	KindType               = "type"
	KindNull               = "null"
	KindSecurity           = "security"
	KindOther              = "other"
)

// Violation is one way an exchange departs from the description. Pointer
// is a JSON pointer into the body (array indices written "*"), or
// /query/NAME, /path/NAME, /header/NAME for a parameter.
type Violation struct {
	Operation string // "GET /load_balancers/{id}"
	Side      string // "request" or "response 200"
	Pointer   string
	Kind      string // one of the Kind constants, or the schema keyword that failed (enum, format, ...)
	Detail    string
}

// Key identifies a violation for deduplication: operation, side, pointer, kind.
func (v Violation) Key() string {
	return v.Operation + " " + v.Side + " " + v.Pointer + " " + v.Kind
}

// String writes the violation on one line: operation, side, pointer, kind, detail.
func (v Violation) String() string {
	return fmt.Sprintf("%s: %s %s: %s: %s", v.Operation, v.Side, orRoot(v.Pointer), v.Kind, v.Detail)
}

func orRoot(p string) string {
	if p == "" {
		return "/"
	}
	return p
}

// Dedupe keeps the first violation of each Key, sorted by Key.
func Dedupe(vs []Violation) []Violation {
	seen := map[string]bool{}
	var out []Violation
	for _, v := range vs {
		if !seen[v.Key()] {
			seen[v.Key()] = true
			out = append(out, v)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Key() < out[j].Key() })
	return out
}

// flatten turns kin-openapi's nested errors into violations.
func flatten(err error, op, side string, out []Violation) []Violation {
	var me openapi3.MultiError
	if errors.As(err, &me) && !isWrapper(err) {
		for _, e := range me {
			out = flatten(e, op, side, out)
		}
		return out
	}
	switch e := err.(type) {
	case *openapi3filter.RequestError:
		return requestError(e, op, side, out)
	case *openapi3filter.ResponseError:
		if e.Err == nil {
			kind := KindOther
			if e.Reason == "status is not supported" {
				kind = KindUndocumentedStatus
			}
			return append(out, Violation{Operation: op, Side: side, Kind: kind, Detail: e.Reason})
		}
		return flatten(e.Err, op, side, out)
	case *openapi3filter.SecurityRequirementsError:
		return append(out, Violation{Operation: op, Side: side, Kind: KindSecurity, Detail: e.Error()})
	case *openapi3.SchemaError:
		return append(out, schemaViolation(e, op, side, ""))
	}
	return append(out, Violation{Operation: op, Side: side, Kind: KindOther, Detail: err.Error()})
}

// isWrapper tells a request or response error that wraps a MultiError
// (flattened through its own case, which knows the parameter) from a bare one.
func isWrapper(err error) bool {
	switch err.(type) {
	case *openapi3filter.RequestError, *openapi3filter.ResponseError:
		return true
	}
	return false
}

func requestError(e *openapi3filter.RequestError, op, side string, out []Violation) []Violation {
	prefix := ""
	if p := e.Parameter; p != nil {
		prefix = "/" + p.In + "/" + p.Name
	}
	if e.Err == nil {
		kind := KindOther
		if strings.Contains(e.Reason, "must have a value") || strings.Contains(e.Reason, "value is required") {
			kind = KindRequired
		}
		return append(out, Violation{Operation: op, Side: side, Pointer: prefix, Kind: kind, Detail: e.Error()})
	}
	var me openapi3.MultiError
	if errors.As(e.Err, &me) {
		for _, inner := range me {
			out = requestError(&openapi3filter.RequestError{Parameter: e.Parameter, RequestBody: e.RequestBody, Reason: e.Reason, Err: inner}, op, side, out)
		}
		return out
	}
	var se *openapi3.SchemaError
	if errors.As(e.Err, &se) {
		return append(out, schemaViolation(se, op, side, prefix))
	}
	var pe *openapi3filter.ParseError
	if errors.As(e.Err, &pe) {
		// A parameter that does not parse as its schema's type.
		return append(out, Violation{Operation: op, Side: side, Pointer: prefix, Kind: KindType, Detail: e.Error()})
	}
	var sre *openapi3filter.SecurityRequirementsError
	if errors.As(e.Err, &sre) {
		return append(out, Violation{Operation: op, Side: side, Kind: KindSecurity, Detail: e.Error()})
	}
	if p := e.Parameter; p != nil && p.Required && strings.Contains(e.Error(), "must have a value") {
		return append(out, Violation{Operation: op, Side: side, Pointer: prefix, Kind: KindRequired, Detail: e.Error()})
	}
	return append(out, Violation{Operation: op, Side: side, Pointer: prefix, Kind: KindOther, Detail: e.Error()})
}

var missingProperty = regexp.MustCompile(`^property "([^"]+)" is missing$`)

// schemaViolation names a schema error by the keyword that failed and the
// place: a missing property's pointer ends in the property's name.
func schemaViolation(e *openapi3.SchemaError, op, side, prefix string) Violation {
	ptr := e.JSONPointer()
	kind := e.SchemaField
	switch kind {
	case "nullable":
		kind = KindNull
	case "required":
		// kin-openapi points at the missing property already; make sure.
		if m := missingProperty.FindStringSubmatch(e.Reason); m != nil && (len(ptr) == 0 || ptr[len(ptr)-1] != m[1]) {
			ptr = append(ptr, m[1])
		}
	case "":
		kind = KindOther
	}
	return Violation{Operation: op, Side: side, Pointer: prefix + pointer(ptr), Kind: kind, Detail: e.Reason}
}

// pointer writes a JSON pointer, array indices (all-digit segments) as "*".
func pointer(segs []string) string {
	var b strings.Builder
	for _, s := range segs {
		b.WriteByte('/')
		if s != "" && strings.Trim(s, "0123456789") == "" {
			b.WriteByte('*')
			continue
		}
		b.WriteString(strings.NewReplacer("~", "~0", "/", "~1").Replace(s))
	}
	return b.String()
}
