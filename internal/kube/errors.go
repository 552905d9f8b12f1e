package kube

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
)

// Sentinel errors a StatusError unwraps to, by HTTP status.
var (
	ErrNotFound        = errors.New("not found")
	ErrConflict        = errors.New("conflict")
	ErrForbidden       = errors.New("forbidden")
	ErrUnauthorized    = errors.New("unauthorized")
	ErrTooManyRequests = errors.New("too many requests")
	ErrInvalid         = errors.New("invalid")
)

// StatusError is a non-2xx answer of the API server, with its Status
// object's reason and message.
type StatusError struct {
	Method, Path string
	Code         int
	Reason       string
	Message      string
	// RetryAfter is the server's Retry-After, when it sent one.
	RetryAfter time.Duration
	// api is client-go's error, for apierrors.IsNotFound and friends.
	api error
}

// wrap turns client-go's error for METHOD PATH into a StatusError when
// the server answered, and names the request otherwise.
func wrap(method, path string, err error) error {
	if err == nil {
		return nil
	}
	var st apierrors.APIStatus
	if !errors.As(err, &st) {
		return fmt.Errorf("kubernetes API %s %s: %w", method, path, err)
	}
	s := st.Status()
	se := &StatusError{Method: method, Path: path, Code: int(s.Code), Reason: string(s.Reason), Message: s.Message, api: err}
	if d, ok := apierrors.SuggestsClientDelay(err); ok {
		se.RetryAfter = time.Duration(d) * time.Second
	}
	return se
}

func (e *StatusError) Error() string {
	hint := ""
	switch e.Code {
	case http.StatusUnauthorized:
		hint = ": the kubeconfig's credentials were rejected; fetch a fresh one (talosctl kubeconfig)"
	case http.StatusForbidden:
		hint = ": the kubeconfig's user may not do this; use an admin kubeconfig"
	}
	msg := e.Message
	if msg == "" {
		msg = http.StatusText(e.Code)
	}
	return fmt.Sprintf("kubernetes API %s %s: HTTP %d %s%s", e.Method, e.Path, e.Code, msg, hint)
}

// Unwrap maps the status to a sentinel error, and gives client-go's.
func (e *StatusError) Unwrap() []error {
	var out []error
	if s := e.sentinel(); s != nil {
		out = append(out, s)
	}
	if e.api != nil {
		out = append(out, e.api)
	}
	return out
}

func (e *StatusError) sentinel() error {
	switch e.Code {
	case http.StatusNotFound:
		return ErrNotFound
	case http.StatusConflict:
		return ErrConflict
	case http.StatusForbidden:
		return ErrForbidden
	case http.StatusUnauthorized:
		return ErrUnauthorized
	case http.StatusTooManyRequests:
		return ErrTooManyRequests
	case http.StatusUnprocessableEntity, http.StatusBadRequest:
		return ErrInvalid
	}
	return nil
}

// IsRetryable reports whether waiting and trying again may help: the server
// was unreachable, overloaded, or not ready (a transport error, 429, 5xx, a
// kind whose CRD is not served yet, a conflict). Credentials, permissions,
// invalid objects and everything else are fatal.
func IsRetryable(err error) bool {
	if err == nil {
		return false
	}
	var se *StatusError
	if errors.As(err, &se) {
		return se.Code == http.StatusTooManyRequests || se.Code == http.StatusConflict || se.Code >= 500
	}
	if errors.Is(err, ErrNoKind) {
		return true
	}
	// Transport errors (connection refused, timeouts, TLS handshakes while
	// the API server restarts) are worth another try; anything else (an
	// object that does not encode, a response that does not decode) is not.
	var ue *url.Error
	return errors.As(err, &ue)
}

// ErrNoKind marks a kind the API server does not serve (yet: a CRD may be
// on its way).
var ErrNoKind = errors.New("kind not served")
