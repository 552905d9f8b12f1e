package hcloudfake

import (
	"fmt"
	"net/http"
)

// apiError is an error answered in Hetzner's format
// {"error":{"code":"...","message":"...","details":...}}.
type apiError struct {
	status  int
	code    string
	message string
	details any
}

func (e *apiError) Error() string { return fmt.Sprintf("%s (%s)", e.message, e.code) }

// errorBody is the JSON body of an error response.
func errorBody(e *apiError) map[string]any {
	body := map[string]any{"code": e.code, "message": e.message, "details": e.details}
	return map[string]any{"error": body}
}

func errNoRoute(rq *request) error {
	return &apiError{status: http.StatusNotFound, code: "not_found",
		message: fmt.Sprintf("no route for %s /%s in the fake Hetzner Cloud API", rq.method, joinSegs(rq.segs))}
}

func errNotFound(kind string, id int64) error {
	return &apiError{status: http.StatusNotFound, code: "not_found", message: fmt.Sprintf("%s with ID %d not found", kind, id)}
}

// errInvalid is invalid_input with the field details Hetzner sends.
func errInvalid(field, msg string) error {
	details := map[string]any{"fields": []map[string]any{{"name": field, "messages": []string{msg}}}}
	return &apiError{status: http.StatusBadRequest, code: "invalid_input", message: fmt.Sprintf("invalid input in field '%s'", field), details: details}
}

func errUniqueness(field string) error {
	details := map[string]any{"fields": []map[string]any{{"name": field}}}
	return &apiError{status: http.StatusConflict, code: "uniqueness_error", message: fmt.Sprintf("%s is already used", field), details: details}
}

func errCode(status int, code, msg string) error {
	return &apiError{status: status, code: code, message: msg}
}

func errMethod(rq *request) error {
	return &apiError{status: http.StatusMethodNotAllowed, code: "not_found",
		message: fmt.Sprintf("method %s not allowed on /%s", rq.method, joinSegs(rq.segs))}
}

func joinSegs(segs []string) string {
	out := ""
	for i, s := range segs {
		if i > 0 {
			out += "/"
		}
		out += s
	}
	return out
}
