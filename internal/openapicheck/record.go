package openapicheck

import (
	"bytes"
	"io"
	"net/http"
	"slices"
	"sync"
)

// Recorder is an http.Handler middleware that records every exchange with
// the handler it wraps. Mount it where paths are relative to the API root.
type Recorder struct {
	next http.Handler
	mu   sync.Mutex
	log  []Exchange
}

// NewRecorder wraps next.
func NewRecorder(next http.Handler) *Recorder { return &Recorder{next: next} }

// ServeHTTP serves the request through the wrapped handler and records it.
func (rec *Recorder) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	r.Body = io.NopCloser(bytes.NewReader(body))
	cw := &capture{ResponseWriter: w, status: http.StatusOK}
	rec.next.ServeHTTP(cw, r)
	ex := Exchange{Method: r.Method, Path: r.URL.Path, RawQuery: r.URL.RawQuery, RequestHeader: r.Header.Clone(),
		RequestBody: body, Status: cw.status, ResponseHeader: w.Header().Clone(), ResponseBody: cw.body.Bytes()}
	rec.mu.Lock()
	rec.log = append(rec.log, ex)
	rec.mu.Unlock()
}

// Exchanges returns what was recorded so far, in order.
func (rec *Recorder) Exchanges() []Exchange {
	rec.mu.Lock()
	defer rec.mu.Unlock()
	return slices.Clone(rec.log)
}

// capture keeps the status and body a handler writes.
type capture struct {
	http.ResponseWriter
	status int
	body   bytes.Buffer
}

func (c *capture) WriteHeader(status int) {
	c.status = status
	c.ResponseWriter.WriteHeader(status)
}

func (c *capture) Write(p []byte) (int, error) {
	c.body.Write(p)
	return c.ResponseWriter.Write(p)
}
