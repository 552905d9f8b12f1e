package main

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
)

// TestPlanRefusedEndpointFails: a Hetzner endpoint that apply refuses
// (plain http to another machine: a TEST-NET address, never dialled) fails
// plan too, with an error naming the variable, the reason and --offline;
// no plan is printed. With --offline the plan comes from the state alone
// and exits 0.
func TestPlanRefusedEndpointFails(t *testing.T) {
	ipEcho(t)
	_, cfg := seedConfig(t)
	t.Setenv("HCLOUD_TOKEN", strings.Repeat("r", 64))
	t.Setenv("HCLOUD_ENDPOINT", "http://192.0.2.1/v1")
	for _, args := range [][]string{{"plan", "--config", cfg}, {"plan", "--json", "--config", cfg}} {
		out, err := run(t, args...)
		if err == nil {
			t.Fatalf("%s exits 0 with a refused HCLOUD_ENDPOINT:\n%s", strings.Join(args, " "), out)
		}
		for _, want := range []string{"HCLOUD_ENDPOINT", "plain http", "use https", "--offline"} {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("%s: error lacks %q: %v", strings.Join(args, " "), want, err)
			}
		}
		if strings.Contains(out, "Network: private network") || strings.Contains(out, `"steps"`) {
			t.Errorf("%s printed a plan before failing:\n%s", strings.Join(args, " "), out)
		}
	}
	out, err := run(t, "plan", "--offline", "--config", cfg)
	if err != nil {
		t.Fatalf("plan --offline: %v\n%s", err, out)
	}
	if !strings.Contains(out, "not compared with Hetzner (--offline") || !strings.Contains(out, "create  network") {
		t.Errorf("plan --offline does not say it planned from the state alone:\n%s", out)
	}
}

// TestPlanOfflineAsksNoHetznerAPI: plan --offline sends no request to the
// Hetzner API, and its notes say why nothing was compared.
func TestPlanOfflineAsksNoHetznerAPI(t *testing.T) {
	ipEcho(t)
	_, cfg := seedConfig(t)
	var asked atomic.Int32
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/" {
			// The loopback sandbox probe (cloud.IsSandbox), outside the
			// API's paths: no Hetzner operation.
			w.WriteHeader(http.StatusNotFound)
			return
		}
		asked.Add(1)
		t.Logf("asked %s %s", r.Method, r.URL)
		http.Error(w, `{"error":{"code":"unavailable","message":"not here"}}`, http.StatusServiceUnavailable)
	}))
	t.Cleanup(api.Close)
	t.Setenv("HCLOUD_TOKEN", strings.Repeat("r", 64))
	t.Setenv("HCLOUD_ENDPOINT", api.URL+"/v1")
	out, err := run(t, "plan", "--json", "--offline", "--config", cfg)
	if err != nil {
		t.Fatalf("plan --json --offline: %v\n%s", err, out)
	}
	if n := asked.Load(); n != 0 {
		t.Errorf("plan --offline sent %d requests to the Hetzner API", n)
	}
	if !strings.Contains(out, `"preflight_note": "pre-flight not checked against Hetzner: --offline: the Hetzner API is not asked"`) {
		t.Errorf("the JSON plan does not say why pre-flight was skipped:\n%s", out)
	}
}
