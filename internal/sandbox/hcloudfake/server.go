package hcloudfake

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// maxBody bounds request bodies; Hetzner's largest legitimate body is a
// server create with 32 KiB of user data.
const maxBody = 1 << 20

// routeTemplate names a route for statistics, numeric segments replaced by {id}.
func routeTemplate(method, path string) string {
	segs := strings.Split(strings.Trim(path, "/"), "/")
	for i, s := range segs {
		if _, err := strconv.ParseInt(s, 10, 64); err == nil {
			segs[i] = "{id}"
		}
	}
	return method + " /" + strings.Join(segs, "/")
}

// userAgentApp is the application a User-Agent names: its first product
// token without the version ("ohmytalos/1.0 hcloud-go/2.52.0" is
// "ohmytalos"; hcloud.WithApplication puts it first).
func userAgentApp(ua string) string {
	first, _, _ := strings.Cut(strings.TrimSpace(ua), " ")
	app, _, _ := strings.Cut(first, "/")
	return app
}

// ServeHTTP serves the Hetzner Cloud API; mount it at the API root, so that
// the hcloud-go endpoint is the server's URL (paths /servers, /networks, ...).
func (f *Fake) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	path := strings.TrimSuffix(r.URL.Path, "/")
	f.mu.Lock()
	f.stats.Requests++
	route := routeTemplate(r.Method, path)
	f.stats.ByRoute[route]++
	agent := userAgentApp(r.UserAgent())
	if f.stats.ByAgent[agent] == nil {
		f.stats.ByAgent[agent] = map[string]int{}
	}
	f.stats.ByAgent[agent][route]++
	delay := f.latencyFor(path)
	f.mu.Unlock()
	if delay > 0 {
		select {
		case <-time.After(delay):
		case <-r.Context().Done():
			return
		}
	}

	body, err := io.ReadAll(io.LimitReader(r.Body, maxBody+1))
	if err != nil {
		writeJSON(w, http.StatusBadRequest, errorBody(&apiError{status: http.StatusBadRequest, code: "invalid_input", message: "cannot read request body: " + err.Error()}))
		return
	}

	f.mu.Lock()
	status, resp := f.handle(r, path, body)
	data := encode(&status, resp.body) // under the lock: bodies may share state
	f.syncForwarders()
	f.mu.Unlock()

	f.runHooks()
	for k, v := range resp.headers {
		w.Header().Set(k, v)
	}
	if data == nil {
		w.WriteHeader(status)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(data)
}

// runHooks delivers queued hook calls in the order they happened. Drains are
// serialized by hookMu, so a request's hooks have run before its response
// is written, whichever request drained them.
func (f *Fake) runHooks() {
	f.hookMu.Lock()
	defer f.hookMu.Unlock()
	f.mu.Lock()
	queue := f.hookQueue
	f.hookQueue = nil
	f.mu.Unlock()
	if f.opts.Hooks == nil {
		return
	}
	for _, h := range queue {
		h(f.opts.Hooks)
	}
}

// response is what handle produced: headers and a JSON body (nil for 204).
type response struct {
	headers map[string]string
	body    any
}

// handle runs one request under f.mu.
func (f *Fake) handle(r *http.Request, path string, body []byte) (int, response) {
	now := f.opts.Now()
	f.reqSeq++
	resp := response{headers: map[string]string{}}
	allowed := f.bucket.take(now)
	resp.headers["RateLimit-Limit"] = strconv.Itoa(f.bucket.capacity)
	resp.headers["RateLimit-Remaining"] = strconv.Itoa(f.bucket.tokens)
	resp.headers["RateLimit-Reset"] = strconv.FormatInt(f.bucket.reset(now).Unix(), 10)

	fail := func(e *apiError) (int, response) {
		switch {
		case e.status == http.StatusTooManyRequests:
			f.stats.RateLimited++
		case e.status >= 500:
			f.stats.ServerErrors++
		}
		resp.body = errorBody(e)
		return e.status, resp
	}

	if !allowed {
		return fail(&apiError{status: http.StatusTooManyRequests, code: "rate_limit_exceeded",
			message: "limit of " + strconv.Itoa(f.bucket.capacity) + " requests per hour reached"})
	}
	token, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	if !ok || token != f.opts.Token || f.opts.Token == "" {
		return fail(&apiError{status: http.StatusUnauthorized, code: "unauthorized", message: "unable to authenticate"})
	}
	if inj := f.matchInjection(r.Method, path); inj != nil {
		return fail(injectedError(inj.status))
	}
	if f.opts.ReadOnly && r.Method != http.MethodGet && r.Method != http.MethodHead {
		return fail(&apiError{status: http.StatusForbidden, code: "forbidden",
			message: "insufficient permissions for this request: the API token is read-only; create a Read & Write token"})
	}
	if len(body) > maxBody {
		return fail(&apiError{status: http.StatusRequestEntityTooLarge, code: "invalid_input", message: "request body too large"})
	}

	f.advance(now)

	rq := &request{method: r.Method, query: r.URL.Query(), body: body, now: now}
	if p := strings.Trim(path, "/"); p != "" {
		rq.segs = strings.Split(p, "/")
	}
	status, out, err := f.route(rq)
	if err != nil {
		var ae *apiError
		if !errors.As(err, &ae) {
			ae = &apiError{status: http.StatusInternalServerError, code: "server_error", message: err.Error()}
		}
		return fail(ae)
	}
	resp.body = out
	return status, resp
}

func (f *Fake) latencyFor(path string) time.Duration {
	best, bestLen := time.Duration(0), -1
	for prefix, d := range f.latency {
		if strings.HasPrefix(path, prefix) && len(prefix) > bestLen {
			best, bestLen = d, len(prefix)
		}
	}
	return best
}

func (f *Fake) matchInjection(method, path string) *injection {
	for i, inj := range f.injections {
		if (inj.method == "" || inj.method == method) && strings.HasPrefix(path, inj.prefix) {
			inj.count--
			if inj.count <= 0 {
				f.injections = append(f.injections[:i], f.injections[i+1:]...)
			}
			return inj
		}
	}
	return nil
}

// injectedError maps an HTTP status to the error code Hetzner sends with it.
func injectedError(status int) *apiError {
	codes := map[int]string{
		http.StatusBadRequest:          "invalid_input",
		http.StatusUnauthorized:        "unauthorized",
		http.StatusForbidden:           "forbidden",
		http.StatusNotFound:            "not_found",
		http.StatusConflict:            "conflict",
		http.StatusPreconditionFailed:  "resource_unavailable",
		http.StatusLocked:              "locked",
		http.StatusTooManyRequests:     "rate_limit_exceeded",
		http.StatusInternalServerError: "server_error",
		http.StatusBadGateway:          "bad_gateway",
		http.StatusServiceUnavailable:  "service_error",
		http.StatusGatewayTimeout:      "timeout",
	}
	code, ok := codes[status]
	if !ok {
		code = "unknown_error"
	}
	return &apiError{status: status, code: code, message: fmt.Sprintf("injected %d %s", status, http.StatusText(status))}
}

// route dispatches a request to the handler of its resource kind.
func (f *Fake) route(rq *request) (int, any, error) {
	if len(rq.segs) == 0 {
		return 0, nil, errNoRoute(rq)
	}
	if st, out, err, ok := f.routeActions(rq); ok {
		return st, out, err
	}
	if serve, ok := f.routes()[rq.segs[0]]; ok {
		return serve(rq)
	}
	return 0, nil, errNoRoute(rq)
}

// routes maps a path's first segment to the handler of its resource kind.
func (f *Fake) routes() map[string]func(*request) (int, any, error) {
	kinds := []interface {
		serve(*Fake, *request) (int, any, error)
		path() string
	}{f.serverKind(), f.networkKind(), f.firewallKind(), f.lbKind(), f.pgKind(), f.sshKeyKind(),
		f.imageKind(), f.volumeKind(), f.primaryIPKind()}
	out := map[string]func(*request) (int, any, error){}
	for _, k := range kinds {
		out[k.path()] = func(rq *request) (int, any, error) { return k.serve(f, rq) }
	}
	for _, seg := range []string{"server_types", "locations", "datacenters", "load_balancer_types", "pricing"} {
		out[seg] = f.serveCatalog
	}
	return out
}

// encode marshals a response body; nil stays nil (204 No Content).
func encode(status *int, body any) []byte {
	if body == nil {
		return nil
	}
	data, err := json.Marshal(body)
	if err != nil {
		*status = http.StatusInternalServerError
		data, _ = json.Marshal(errorBody(&apiError{code: "server_error", message: "cannot encode response: " + err.Error()}))
	}
	return data
}

func writeJSON(w http.ResponseWriter, status int, body any) {
	data := encode(&status, body)
	if data != nil {
		w.Header().Set("Content-Type", "application/json")
	}
	w.WriteHeader(status)
	_, _ = w.Write(data)
}
