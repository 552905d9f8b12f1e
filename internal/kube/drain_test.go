package kube

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
)

// drainAPI answers the drain calls and records what was asked.
type drainAPI struct {
	got []string // "METHOD PATH?QUERY CONTENT-TYPE BODY"
}

func (a *drainAPI) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	a.got = append(a.got, r.Method+" "+r.URL.RequestURI()+" "+r.Header.Get("Content-Type")+" "+string(body))
	switch {
	case r.URL.Path == "/api/v1/nodes/gone":
		writeStatus(w, http.StatusNotFound, "NotFound", `nodes "gone" not found`)
	case r.URL.Path == "/api/v1/namespaces/default/pods/guarded/eviction":
		writeStatus(w, http.StatusTooManyRequests, "TooManyRequests", "Cannot evict pod as it would violate the pod's disruption budget.")
	case r.URL.Path == "/api/v1/namespaces/default/pods/vanished/eviction":
		writeStatus(w, http.StatusNotFound, "NotFound", `pods "vanished" not found`)
	case r.URL.Path == "/api/v1/pods":
		writeJSON(w, map[string]any{"items": []any{map[string]any{"metadata": map[string]any{"name": "p", "namespace": "default"}}}})
	default:
		writeJSON(w, map[string]any{"kind": "Status", "status": "Success"})
	}
}

func TestDrainCalls(t *testing.T) {
	api := &drainAPI{}
	srv := httptest.NewServer(api)
	defer srv.Close()
	c := NewForEndpoint(Endpoint{Server: srv.URL})
	ctx := context.Background()

	if err := c.Cordon(ctx, "w-2"); err != nil {
		t.Fatal(err)
	}
	if want := `PATCH /api/v1/nodes/w-2 application/merge-patch+json {"spec":{"unschedulable":true}}`; api.got[0] != want {
		t.Errorf("cordon sent %q, want %q", api.got[0], want)
	}
	if err := c.Cordon(ctx, "gone"); !errors.Is(err, ErrNotFound) {
		t.Errorf("cordon of a missing node: %v, want ErrNotFound", err)
	}
	pods, err := c.PodsOnNode(ctx, "w-2")
	if err != nil || len(pods) != 1 || pods[0]["kind"] != "Pod" {
		t.Fatalf("pods: %v %v", pods, err)
	}
	if want := "GET /api/v1/pods?fieldSelector=spec.nodeName%3Dw-2  "; api.got[2] != want {
		t.Errorf("list sent %q, want %q", api.got[2], want)
	}
	if err := c.Evict(ctx, "default", "p"); err != nil {
		t.Fatal(err)
	}
	var ev map[string]any
	last := api.got[3]
	if err := json.Unmarshal([]byte(last[len("POST /api/v1/namespaces/default/pods/p/eviction application/json "):]), &ev); err != nil {
		t.Fatalf("eviction body of %q: %v", last, err)
	}
	if ev["apiVersion"] != "policy/v1" || ev["kind"] != "Eviction" {
		t.Errorf("eviction = %v", ev)
	}
	if err := c.Evict(ctx, "default", "guarded"); !errors.Is(err, ErrTooManyRequests) {
		t.Errorf("eviction a budget forbids: %v, want ErrTooManyRequests", err)
	}
	if err := c.Evict(ctx, "default", "vanished"); err != nil {
		t.Errorf("eviction of a pod already gone: %v", err)
	}
	if err := c.DeleteNode(ctx, "gone"); err != nil {
		t.Errorf("delete of a node already gone: %v", err)
	}
}

func TestDrainSkipReason(t *testing.T) {
	for _, tc := range []struct {
		name string
		pod  Object
		want string
	}{
		{"plain", Object{"metadata": map[string]any{"name": "a"}, "status": map[string]any{"phase": "Running"}}, ""},
		{"replicaset", Object{"metadata": map[string]any{"ownerReferences": []any{map[string]any{"kind": "ReplicaSet", "controller": true}}}}, ""},
		{"daemonset", Object{"metadata": map[string]any{"ownerReferences": []any{map[string]any{"kind": "DaemonSet", "controller": true}}}}, "DaemonSet pod"},
		{"mirror", Object{"metadata": map[string]any{"annotations": map[string]any{"kubernetes.io/config.mirror": "abc"}}}, "mirror pod"},
		{"done", Object{"status": map[string]any{"phase": "Succeeded"}}, "finished"},
	} {
		if got := DrainSkipReason(tc.pod); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
}
