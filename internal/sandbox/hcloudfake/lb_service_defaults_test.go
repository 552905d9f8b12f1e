package hcloudfake_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"reflect"
	"strconv"
	"testing"
)

// rawJSON sends a JSON body (none when body is "") to the fake and returns
// the status and decoded answer.
func rawJSON(t *testing.T, e *env, method, path, body string) (int, map[string]any) {
	t.Helper()
	var r io.Reader
	if body != "" {
		r = bytes.NewBufferString(body)
	}
	req, _ := http.NewRequest(method, e.url+path, r)
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	var out map[string]any
	if err := json.Unmarshal(raw, &out); err != nil {
		t.Fatalf("%s %s: decode %s: %v", method, path, raw, err)
	}
	return resp.StatusCode, out
}

// rawServices reads load balancer id's services as JSON objects, by listen port.
func rawServices(t *testing.T, e *env, id string) map[float64]map[string]any {
	t.Helper()
	status, body := rawJSON(t, e, http.MethodGet, "/load_balancers/"+id, "")
	lb, _ := body["load_balancer"].(map[string]any)
	if status != http.StatusOK || lb == nil {
		t.Fatalf("get load balancer %s: %d %v", id, status, body)
	}
	out := map[float64]map[string]any{}
	for _, s := range lb["services"].([]any) {
		m := s.(map[string]any)
		out[m["listen_port"].(float64)] = m
	}
	return out
}

// wantCheck asserts a service's proxyprotocol and health check fields.
func wantCheck(t *testing.T, svc map[string]any, proxy bool, want map[string]any) {
	t.Helper()
	if svc == nil {
		t.Fatal("service missing")
	}
	if svc["proxyprotocol"] != proxy {
		t.Errorf("port %v proxyprotocol = %v, want %v", svc["listen_port"], svc["proxyprotocol"], proxy)
	}
	// The description has objects, never null, for service.http and
	// health_check.http, a tcp service's too.
	hc, _ := svc["health_check"].(map[string]any)
	_, httpObj := svc["http"].(map[string]any)
	_, checkHTTPObj := hc["http"].(map[string]any)
	if !httpObj || !checkHTTPObj {
		t.Fatalf("port %v http = %v, health_check = %v; want objects", svc["listen_port"], svc["http"], hc)
	}
	for k, v := range want {
		if !reflect.DeepEqual(hc[k], v) {
			t.Errorf("port %v health_check.%s = %v, want %v", svc["listen_port"], k, hc[k], v)
		}
	}
}

// wantInvalid asserts an answer is invalid_input (400) naming field.
func wantInvalid(t *testing.T, status int, body map[string]any, field string) {
	t.Helper()
	e, _ := body["error"].(map[string]any)
	if status != http.StatusBadRequest || e == nil || e["code"] != "invalid_input" {
		t.Fatalf("answer %d %v, want 400 invalid_input", status, body)
	}
	fields := e["details"].(map[string]any)["fields"].([]any)
	if got := fields[0].(map[string]any)["name"]; got != field {
		t.Errorf("invalid field = %v, want %s", got, field)
	}
}

// The real API fills what a service request leaves out (proxyprotocol off,
// a health check on the destination port, interval 15, timeout 10, retries
// 3), in the services of a create, add_service and update_service alike;
// it still refuses a health check without protocol or port, and an
// update_service without listen_port.
func TestLoadBalancerServicesGetTheAPIsDefaults(t *testing.T) {
	e, _ := newPlainEnv(t)
	status, body := rawJSON(t, e, http.MethodPost, "/load_balancers", `{"name":"lb","load_balancer_type":"lb11","location":"fsn1",
		"services":[{"protocol":"tcp","listen_port":6443,"destination_port":6443},
			{"protocol":"tcp","listen_port":50000,"destination_port":50000,"proxyprotocol":true,"health_check":{"protocol":"tcp","port":50001}}]}`)
	if status != http.StatusCreated {
		t.Fatalf("create without optional service fields: %d %v", status, body)
	}
	id := strconv.FormatFloat(body["load_balancer"].(map[string]any)["id"].(float64), 'f', 0, 64)
	actions := "/load_balancers/" + id + "/actions/"
	status, body = rawJSON(t, e, http.MethodPost, actions+"add_service", `{"protocol":"http"}`)
	if status != http.StatusCreated {
		t.Fatalf("add_service without optional fields: %d %v", status, body)
	}
	status, body = rawJSON(t, e, http.MethodPost, actions+"update_service", `{"listen_port":50000,"health_check":{"interval":30}}`)
	if status != http.StatusCreated {
		t.Fatalf("update_service with only interval: %d %v", status, body)
	}
	svcs := rawServices(t, e, id)
	wantCheck(t, svcs[6443], false, map[string]any{"protocol": "tcp", "port": 6443.0, "interval": 15.0, "timeout": 10.0, "retries": 3.0})
	wantCheck(t, svcs[50000], true, map[string]any{"protocol": "tcp", "port": 50001.0, "interval": 30.0, "timeout": 10.0, "retries": 3.0})
	wantCheck(t, svcs[80], false, map[string]any{"protocol": "http", "port": 80.0, "interval": 15.0, "timeout": 10.0, "retries": 3.0,
		"http": map[string]any{"domain": "", "path": "/", "response": "", "status_codes": []any{"2??", "3??"}, "tls": false}})

	for _, c := range []struct{ path, body, field string }{
		{"/load_balancers", `{"name":"lb2","load_balancer_type":"lb11","location":"fsn1",
			"services":[{"protocol":"tcp","listen_port":1,"destination_port":1,"health_check":{"port":1}}]}`, "services[0].health_check.protocol"},
		{actions + "add_service", `{"protocol":"tcp","listen_port":2,"destination_port":2,"health_check":{"protocol":"tcp"}}`, "health_check.port"},
		{actions + "add_service", `{"protocol":"tcp","listen_port":2,"destination_port":2,"health_check":{"protocol":"udp","port":2}}`, "health_check.protocol"},
		{actions + "update_service", `{"destination_port":8080}`, "listen_port"},
	} {
		status, body := rawJSON(t, e, http.MethodPost, c.path, c.body)
		wantInvalid(t, status, body, c.field)
	}
}
