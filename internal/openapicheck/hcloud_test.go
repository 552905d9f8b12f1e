package openapicheck

import (
	"net/http"
	"strings"
	"testing"
)

// loadHCloud loads Hetzner's description, skipping when it is absent.
func loadHCloud(t *testing.T) *Checker {
	t.Helper()
	p, ok := LocateHCloud()
	if !ok {
		t.Skipf("Hetzner's API description %s is absent (shared/data beside the repository holds it)", p)
	}
	c, err := LoadHCloudFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestLoadsHetznersDescription(t *testing.T) {
	c := loadHCloud(t)
	if c.Version() != "3.0.3" || c.Operations() < 150 {
		t.Errorf("version %s, %d operations", c.Version(), c.Operations())
	}
}

// nullTargets is a load balancer whose server target carries the nulls
// hcloud-go's schema types write for absent fields.
const nullTargets = `{"load_balancer": {"id": 1, "name": "lb", "targets": [
  {"type": "server", "server": {"id": 4}, "label_selector": null, "ip": null, "health_status": [], "use_private_ip": true},
  {"type": "label_selector", "server": null, "label_selector": {"selector": "a=b"}, "ip": null, "health_status": null, "use_private_ip": true, "targets": []}]}}`

func TestHCloudCatchesNullLoadBalancerTargetFields(t *testing.T) {
	vs := loadHCloud(t).Check(get("/load_balancers/1", 200, nullTargets))
	for _, f := range []string{"server", "ip", "health_status", "label_selector"} {
		if !has(vs, "GET /load_balancers/{id}", "response 200", "/load_balancer/targets/*/"+f, KindNull) {
			t.Errorf("null %s not caught:\n%s", f, list(vs))
		}
	}
	if !has(vs, "GET /load_balancers/{id}", "response 200", "/load_balancer/algorithm", KindRequired) {
		t.Errorf("missing algorithm not caught:\n%s", list(vs))
	}
}

func TestHCloudCatchesUnknownOperationsAndBadRequests(t *testing.T) {
	c := loadHCloud(t)
	if vs := c.Check(post("/servers/1/actions/fly", `{}`, 201, `{}`)); !has(vs, "POST /servers/{id}/actions/fly", "request", "", KindUnknownOperation) {
		t.Errorf("unknown action not caught:\n%s", list(vs))
	}
	vs := c.Check(post("/servers", `{"server_type": 3, "image": "talos", "ssh_keys": [12, "key"], "labels": {"a": 1}}`, 422,
		`{"error": {"code": "invalid_input", "message": "name is missing"}}`))
	if !has(vs, "POST /servers", "request", "/name", KindRequired) || !has(vs, "POST /servers", "request", "/labels/a", KindType) {
		t.Errorf("server create without name and with a numeric label not caught:\n%s", list(vs))
	}
	for _, v := range vs {
		if v.Pointer == "/server_type" || strings.HasPrefix(v.Pointer, "/ssh_keys") {
			t.Errorf("an ID where the description says \"ID or name\" counted as a violation: %s", v)
		}
	}
}

// TestHCloudAmendmentsChangeWhatTheyName checks each amendment against
// the unamended description: it reports what the amendment lets through.
func TestHCloudAmendmentsChangeWhatTheyName(t *testing.T) {
	p, ok := LocateHCloud()
	if !ok {
		t.Skipf("Hetzner's API description %s is absent", p)
	}
	raw, err := LoadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	amended := loadHCloud(t)
	del := Exchange{Method: http.MethodDelete, Path: "/load_balancers/3", RequestHeader: auth, Status: 201, ResponseHeader: jsonCT,
		ResponseBody: []byte(`{"action": {"id": 9, "command": "delete_load_balancer", "status": "running", "progress": 0, "started": "2026-12-01T10:00:00Z", "finished": null, "resources": [{"id": 3, "type": "load_balancer"}], "error": null}}`)}
	if vs := raw.Check(del); !has(vs, "DELETE /load_balancers/{id}", "response 201", "", KindUndocumentedStatus) {
		t.Errorf("unamended: 201 on delete not flagged:\n%s", list(vs))
	}
	if vs := amended.Check(del); len(vs) != 0 {
		t.Errorf("amended: delete answering 201 with an action:\n%s", list(vs))
	}
	create := post("/servers", `{"name": "n", "server_type": 3, "image": 77}`, 422, `{"error": {"code": "invalid_input", "message": "x"}}`)
	if vs := raw.Check(create); !has(vs, "POST /servers", "request", "/server_type", KindType) {
		t.Errorf("unamended: integer server_type not flagged:\n%s", list(vs))
	}
	if vs := amended.Check(create); len(vs) != 0 {
		t.Errorf("amended: server create by IDs:\n%s", list(vs))
	}
}
