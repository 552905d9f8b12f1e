package kubefake

import (
	"encoding/json"
	"fmt"
	"net/http"
)

// apiError is a metav1.Status failure, with kube-apiserver's reasons and
// messages (k8s.io/apimachinery/pkg/api/errors).
type apiError struct {
	code    int
	reason  string
	message string
	details map[string]any
}

func (e *apiError) Error() string { return e.message }

func (e *apiError) status() obj {
	s := obj{
		"kind": "Status", "apiVersion": "v1", "metadata": obj{},
		"status": "Failure", "message": e.message, "reason": e.reason, "code": e.code,
	}
	if e.details != nil {
		s["details"] = e.details
	}

	return s
}

func details(r resource, name string) map[string]any {
	return map[string]any{"name": name, "group": r.group, "kind": r.name}
}

func errNotFound(r resource, name string) *apiError {
	return &apiError{http.StatusNotFound, "NotFound", fmt.Sprintf("%s %q not found", r.groupResource(), name), details(r, name)}
}

func errAlreadyExists(r resource, name string) *apiError {
	return &apiError{http.StatusConflict, "AlreadyExists", fmt.Sprintf("%s %q already exists", r.groupResource(), name), details(r, name)}
}

func errConflict(r resource, name string) *apiError {
	return &apiError{http.StatusConflict, "Conflict", fmt.Sprintf(
		"Operation cannot be fulfilled on %s %q: the object has been modified; please apply your changes to the latest version and try again",
		r.groupResource(), name), details(r, name)}
}

// errInvalid is a 422 with one field cause, as field.ErrorList renders it.
func errInvalid(groupKind, name, field, causeType, detail string) *apiError {
	msg := fmt.Sprintf("%s %q is invalid: %s: %s", groupKind, name, field, detail)

	return &apiError{http.StatusUnprocessableEntity, "Invalid", msg, map[string]any{
		"name": name, "kind": groupKind,
		"causes": []any{obj{"reason": causeType, "message": detail, "field": field}},
	}}
}

func errBadRequest(msg string) *apiError {
	return &apiError{code: http.StatusBadRequest, reason: "BadRequest", message: msg}
}

func errMethodNotAllowed(verb string, r resource) *apiError {
	return &apiError{http.StatusMethodNotAllowed, "MethodNotAllowed", fmt.Sprintf("%s is not supported on resources of kind %q", verb, r.groupResource()), nil}
}

func errNotFoundPath() *apiError {
	return &apiError{http.StatusNotFound, "NotFound", "the server could not find the requested resource", map[string]any{}}
}

func errForbidden(msg string) *apiError {
	return &apiError{http.StatusForbidden, "Forbidden", msg, map[string]any{}}
}

func errUnsupportedMedia(ct string) *apiError {
	return &apiError{http.StatusUnsupportedMediaType, "UnsupportedMediaType", fmt.Sprintf("the body of the request was in an unknown format - accepted media types include: application/json, application/yaml (got %q)", ct), nil}
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(v) //nolint:errcheck // the client went away
}

func writeErr(w http.ResponseWriter, err error) {
	ae, ok := err.(*apiError) //nolint:errorlint // our own errors are never wrapped
	if !ok {
		ae = &apiError{code: http.StatusInternalServerError, reason: "InternalError", message: "Internal error occurred: " + err.Error()}
	}

	writeJSON(w, ae.code, ae.status())
}
