package kube

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sort"
	"strings"
	"sync"
	"testing"

	"k8s.io/client-go/rest"
)

// apiServer is a minimal API server for the client's requests: discovery
// for core/v1 and apps/v1, and a store keyed by REST path. It refuses what
// a real one refuses: an apply without the apply content type or without a
// field manager, a wrong token.
type apiServer struct {
	t       *testing.T
	mu      sync.Mutex
	objects map[string]map[string]any // path -> object
	calls   []string
	status  map[string]int // path -> forced status
}

func (s *apiServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.calls = append(s.calls, r.Method+" "+r.URL.RequestURI())
	if r.Header.Get("Authorization") != "Bearer tok" {
		writeStatus(w, 401, "Unauthorized", "no credentials")
		return
	}
	if code, ok := s.status[r.URL.Path]; ok {
		st := map[string]any{"kind": "Status", "apiVersion": "v1", "status": "Failure", "reason": http.StatusText(code), "message": "forced", "code": code}
		if code == 429 {
			// kube-apiserver's 429 carries the delay in the Status details
			// (apierrors.NewTooManyRequests). Its Retry-After header would
			// make client-go retry by itself; left out to keep the test fast.
			st["details"] = map[string]any{"retryAfterSeconds": 3}
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(code)
		_ = json.NewEncoder(w).Encode(st)
		return
	}
	switch r.URL.Path {
	case "/api/v1":
		writeJSON(w, map[string]any{"resources": []map[string]any{
			{"name": "secrets", "kind": "Secret", "namespaced": true},
			{"name": "nodes", "kind": "Node", "namespaced": false},
			{"name": "nodes/status", "kind": "Node", "namespaced": false},
		}})
		return
	case "/apis/apps/v1":
		writeJSON(w, map[string]any{"resources": []map[string]any{{"name": "daemonsets", "kind": "DaemonSet", "namespaced": true}}})
		return
	}
	switch r.Method {
	case http.MethodPatch:
		if ct := r.Header.Get("Content-Type"); ct != ApplyPatchType {
			writeStatus(w, 415, "UnsupportedMediaType", "content type "+ct)
			return
		}
		q := r.URL.Query()
		if q.Get("fieldManager") != "ohmytalos" || q.Get("force") != "true" {
			writeStatus(w, 422, "Invalid", "fieldManager is required for apply requests")
			return
		}
		var obj map[string]any
		b, _ := io.ReadAll(r.Body)
		if err := json.Unmarshal(b, &obj); err != nil {
			writeStatus(w, 400, "BadRequest", err.Error())
			return
		}
		s.objects[r.URL.Path] = obj
		writeJSON(w, obj)
	case http.MethodGet:
		if obj, ok := s.objects[r.URL.Path]; ok {
			writeJSON(w, obj)
			return
		}
		// A collection (the path ends in a resource name): its objects in
		// any namespace, filtered by one label k=v, two per page.
		res := lastSeg(r.URL.Path)
		if res == "secrets" || res == "nodes" || res == "daemonsets" {
			sel := r.URL.Query().Get("labelSelector")
			var items []map[string]any
			for _, p := range sortedPaths(s.objects) {
				obj := s.objects[p]
				if !strings.Contains(p, "/"+res+"/") {
					continue
				}
				k, v, _ := strings.Cut(sel, "=")
				lb, _ := obj["metadata"].(map[string]any)["labels"].(map[string]any)
				if sel != "" && lb[k] != v {
					continue
				}
				items = append(items, map[string]any{"metadata": obj["metadata"]})
			}
			start := 0
			if c := r.URL.Query().Get("continue"); c != "" {
				_, _ = fmt.Sscan(c, &start)
			}
			end := min(start+2, len(items))
			// A list answer names its kind, as kube-apiserver's does.
			kind := map[string]string{"secrets": "SecretList", "nodes": "NodeList", "daemonsets": "DaemonSetList"}[res]
			page := map[string]any{"kind": kind, "apiVersion": "v1", "items": items[start:end], "metadata": map[string]any{}}
			if end < len(items) {
				page["metadata"] = map[string]any{"continue": fmt.Sprint(end)}
			}
			writeJSON(w, page)
			return
		}
		writeStatus(w, 404, "NotFound", "not found")
	case http.MethodDelete:
		if _, ok := s.objects[r.URL.Path]; !ok {
			writeStatus(w, 404, "NotFound", "not found")
			return
		}
		delete(s.objects, r.URL.Path)
		writeJSON(w, map[string]any{"status": "Success"})
	}
}

func sortedPaths(m map[string]map[string]any) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func lastSeg(p string) string { return p[strings.LastIndex(p, "/")+1:] }

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(v)
}

func writeStatus(w http.ResponseWriter, code int, reason, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(map[string]any{"kind": "Status", "status": "Failure", "reason": reason, "message": msg, "code": code})
}

func newTestClient(t *testing.T) (*Client, *apiServer) {
	t.Helper()
	c, api, _ := newTestClientToken(t, "tok")
	return c, api
}

// newTestClientToken serves the fake and returns a client whose user
// sends token, and the kubeconfig.
func newTestClientToken(t *testing.T, token string) (*Client, *apiServer, string) {
	t.Helper()
	api := &apiServer{t: t, objects: map[string]map[string]any{}, status: map[string]int{}}
	srv := httptest.NewTLSServer(api)
	t.Cleanup(srv.Close)
	kc := testKubeconfig(srv, "    token: "+token+"\n")
	c, err := New([]byte(kc))
	if err != nil {
		t.Fatal(err)
	}
	return c, api, kc
}

// testKubeconfig names srv (its CA inline) with a user whose body is
// user (indented YAML lines).
func testKubeconfig(srv *httptest.Server, user string) string {
	ca := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})
	return fmt.Sprintf(`apiVersion: v1
kind: Config
current-context: admin@demo
clusters:
- name: demo
  cluster:
    server: %s
    certificate-authority-data: %s
users:
- name: admin@demo
  user:
%scontexts:
- name: admin@demo
  context: {cluster: demo, user: admin@demo}
`, srv.URL, base64.StdEncoding.EncodeToString(ca), user)
}

func secret(name string, labels map[string]any) Object {
	return Object{"apiVersion": "v1", "kind": "Secret", "metadata": map[string]any{"name": name, "namespace": "kube-system", "labels": labels}}
}

func TestApplyIsServerSideApply(t *testing.T) {
	c, api := newTestClient(t)
	ctx := context.Background()
	if _, err := c.Apply(ctx, secret("hcloud", nil)); err != nil {
		t.Fatal(err)
	}
	ds := Object{"apiVersion": "apps/v1", "kind": "DaemonSet", "metadata": map[string]any{"name": "cilium", "namespace": "kube-system"}}
	if _, err := c.Apply(ctx, ds); err != nil {
		t.Fatal(err)
	}
	want := []string{
		"GET /api/v1",
		"PATCH /api/v1/namespaces/kube-system/secrets/hcloud?fieldManager=ohmytalos&force=true",
		"GET /apis/apps/v1",
		"PATCH /apis/apps/v1/namespaces/kube-system/daemonsets/cilium?fieldManager=ohmytalos&force=true",
	}
	// client-go passes the request timeout on to the server (?timeout=1m0s).
	for i, c := range api.calls {
		c = strings.Replace(c, "&timeout=1m0s", "", 1)
		api.calls[i] = strings.Replace(c, "?timeout=1m0s", "", 1)
	}
	if got := strings.Join(api.calls, "\n"); got != strings.Join(want, "\n") {
		t.Fatalf("requests:\n%s\nwant:\n%s", got, strings.Join(want, "\n"))
	}
	// Discovery is cached: a second apply sends one request.
	api.calls = nil
	if _, err := c.Apply(ctx, ds); err != nil || len(api.calls) != 1 {
		t.Fatalf("second apply: %v, %d requests", err, len(api.calls))
	}
	got, err := c.Get(ctx, "apps/v1", "DaemonSet", "kube-system", "cilium")
	if err != nil || got["kind"] != "DaemonSet" {
		t.Fatalf("get after apply: %v %v", got, err)
	}
}

func TestErrors(t *testing.T) {
	c, api := newTestClient(t)
	ctx := context.Background()
	cases := []struct {
		name      string
		status    int
		want      error
		retryable bool
	}{
		{"not found", 0, ErrNotFound, false},
		{"forbidden", 403, ErrForbidden, false},
		{"conflict", 409, ErrConflict, true},
		{"throttled", 429, ErrTooManyRequests, true},
		{"server error", 503, nil, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p := "/api/v1/namespaces/kube-system/secrets/missing"
			if tc.status != 0 {
				api.status[p] = tc.status
				defer delete(api.status, p)
			}
			_, err := c.Get(ctx, "v1", "Secret", "kube-system", "missing")
			if err == nil || (tc.want != nil && !errors.Is(err, tc.want)) {
				t.Fatalf("err = %v, want %v", err, tc.want)
			}
			if IsRetryable(err) != tc.retryable {
				t.Errorf("IsRetryable(%v) = %t", err, !tc.retryable)
			}
			var se *StatusError
			if tc.status == 429 && (!errors.As(err, &se) || se.RetryAfter == 0) {
				t.Errorf("Retry-After not read: %v", err)
			}
		})
	}
	if _, err := c.Get(ctx, "cilium.io/v2", "CiliumNode", "", "x"); !errors.Is(err, ErrNoKind) || !IsRetryable(err) {
		t.Errorf("unserved apiVersion: %v", err)
	}
	api.status["/api/v1"] = 404
	c.discovery = nil
	if _, err := c.Get(ctx, "v1", "Node", "", "x"); err == nil || IsRetryable(err) {
		t.Errorf("core v1 not served must be fatal: %v", err)
	}
	delete(api.status, "/api/v1")
	if _, err := c.Get(ctx, "v1", "ConfigMap", "kube-system", "x"); !errors.Is(err, ErrNoKind) {
		t.Errorf("unserved kind: %v", err)
	}
}

func TestListAndDelete(t *testing.T) {
	c, _ := newTestClient(t)
	ctx := context.Background()
	mine := map[string]any{"ohmytalos.io/addon": "hcloud-secret"}
	for _, n := range []string{"a", "b", "c"} {
		if _, err := c.Apply(ctx, secret(n, mine)); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := c.Apply(ctx, secret("other", map[string]any{"x": "y"})); err != nil {
		t.Fatal(err)
	}
	got, err := c.List(ctx, "v1", "Secret", "", "ohmytalos.io/addon=hcloud-secret")
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 3 || got[0]["kind"] != "Secret" {
		t.Fatalf("list = %d items (%v), want 3 Secrets across two pages", len(got), got)
	}
	if err := c.Delete(ctx, "v1", "Secret", "kube-system", "a"); err != nil {
		t.Fatal(err)
	}
	if err := c.Delete(ctx, "v1", "Secret", "kube-system", "a"); err != nil {
		t.Fatalf("deleting what is gone must succeed: %v", err)
	}
}

func TestRetryableTransportOnly(t *testing.T) {
	c, _ := newTestClient(t)
	if _, err := c.Apply(context.Background(), Object{"kind": "Secret"}); err == nil || IsRetryable(err) {
		t.Errorf("an object without apiVersion must fail for good: %v", err)
	}
	down, err := NewForConfig(&rest.Config{Host: "https://127.0.0.1:1"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := down.Get(context.Background(), "v1", "Node", "", "n"); err == nil || !IsRetryable(err) {
		t.Errorf("an unreachable API server is worth another try: %v", err)
	}
}

func TestBadCredentials(t *testing.T) {
	c, _, _ := newTestClientToken(t, "wrong")
	_, err := c.Get(context.Background(), "v1", "Node", "", "n1")
	if !errors.Is(err, ErrUnauthorized) || IsRetryable(err) || !strings.Contains(err.Error(), "fresh one") {
		t.Fatalf("err = %v", err)
	}
}
