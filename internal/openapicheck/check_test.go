package openapicheck

import (
	"net/http"
	"strings"
	"testing"
)

// thingsDoc is a small OpenAPI 3.0 description: things with a required
// id, a name that may not be null and a note that may.
const thingsDoc = `{
  "openapi": "3.0.3",
  "info": {"title": "things", "version": "1"},
  "components": {
    "securitySchemes": {"token": {"type": "http", "scheme": "bearer"}},
    "schemas": {
      "thing": {"type": "object", "required": ["id", "name"], "properties": {
        "id": {"type": "integer"},
        "name": {"type": "string"},
        "note": {"type": "string", "nullable": true},
        "tags": {"type": "array", "items": {"type": "string"}}}},
      "error": {"type": "object", "required": ["error"], "properties": {"error": {"type": "object", "required": ["code"], "properties": {"code": {"type": "string"}}}}}
    }
  },
  "security": [{"token": []}],
  "paths": {
    "/things": {"post": {
      "requestBody": {"required": true, "content": {"application/json": {"schema": {"type": "object", "required": ["name"], "properties": {"name": {"type": "string"}, "size": {"type": "integer"}}}}}},
      "responses": {"201": {"description": "created", "content": {"application/json": {"schema": {"type": "object", "required": ["thing"], "properties": {"thing": {"$ref": "#/components/schemas/thing"}}}}}},
        "4xx": {"description": "user error", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/error"}}}}}}},
    "/things/{id}": {"get": {
      "parameters": [{"name": "id", "in": "path", "required": true, "schema": {"type": "integer"}}],
      "responses": {"200": {"description": "ok", "content": {"application/json": {"schema": {"type": "object", "required": ["thing"], "properties": {"thing": {"$ref": "#/components/schemas/thing"}}}}}}}}},
    "/things/{id}/actions/{action_id}": {"get": {
      "parameters": [{"name": "id", "in": "path", "required": true, "schema": {"type": "integer"}}, {"name": "action_id", "in": "path", "required": true, "schema": {"type": "integer"}}],
      "responses": {"200": {"description": "ok"}}}},
    "/things/{id}/actions/poke": {"get": {
      "parameters": [{"name": "id", "in": "path", "required": true, "schema": {"type": "integer"}}],
      "responses": {"200": {"description": "ok"}}}}
  }
}`

func things(t *testing.T) *Checker {
	t.Helper()
	c, err := Load([]byte(thingsDoc))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

var auth = http.Header{"Authorization": {"Bearer t0ken"}, "Content-Type": {"application/json"}}
var jsonCT = http.Header{"Content-Type": {"application/json"}}

func get(path string, status int, body string) Exchange {
	return Exchange{Method: http.MethodGet, Path: path, RequestHeader: auth, Status: status, ResponseHeader: jsonCT, ResponseBody: []byte(body)}
}

func post(path, req string, status int, body string) Exchange {
	return Exchange{Method: http.MethodPost, Path: path, RequestHeader: auth, RequestBody: []byte(req),
		Status: status, ResponseHeader: jsonCT, ResponseBody: []byte(body)}
}

// has reports whether vs holds a violation of op, side, pointer and kind.
func has(vs []Violation, op, side, ptr, kind string) bool {
	for _, v := range vs {
		if v.Operation == op && v.Side == side && v.Pointer == ptr && v.Kind == kind {
			return true
		}
	}
	return false
}

func list(vs []Violation) string {
	s := make([]string, len(vs))
	for i, v := range vs {
		s[i] = v.String()
	}
	return strings.Join(s, "\n")
}

func TestAValidExchangeHasNoViolation(t *testing.T) {
	c := things(t)
	for _, ex := range []Exchange{
		get("/things/7", 200, `{"thing": {"id": 7, "name": "a", "note": null, "tags": ["x"]}}`),
		post("/things", `{"name": "a", "size": 3}`, 201, `{"thing": {"id": 7, "name": "a"}}`),
		post("/things", `{"name": "a"}`, 422, `{"error": {"code": "invalid_input"}}`),
		get("/things/7/actions/poke", 200, ``),
	} {
		if vs := c.Check(ex); len(vs) != 0 {
			t.Errorf("%s %s: %d violations:\n%s", ex.Method, ex.Path, len(vs), list(vs))
		}
	}
}

func TestCatchesANullWhereNoneIsAllowed(t *testing.T) {
	vs := things(t).Check(get("/things/7", 200, `{"thing": {"id": 7, "name": null, "tags": [null]}}`))
	if !has(vs, "GET /things/{id}", "response 200", "/thing/name", KindNull) || !has(vs, "GET /things/{id}", "response 200", "/thing/tags/*", KindNull) {
		t.Errorf("null name and tag not caught:\n%s", list(vs))
	}
}

func TestCatchesAMissingRequiredFieldAndAWrongType(t *testing.T) {
	c := things(t)
	vs := c.Check(get("/things/7", 200, `{"thing": {"name": 5}}`))
	if !has(vs, "GET /things/{id}", "response 200", "/thing/id", KindRequired) || !has(vs, "GET /things/{id}", "response 200", "/thing/name", KindType) {
		t.Errorf("missing id and numeric name not caught:\n%s", list(vs))
	}
	vs = c.Check(post("/things", `{"size": "big"}`, 201, `{"thing": {"id": 1, "name": "a"}}`))
	if !has(vs, "POST /things", "request", "/name", KindRequired) || !has(vs, "POST /things", "request", "/size", KindType) {
		t.Errorf("request without name and with a string size not caught:\n%s", list(vs))
	}
	vs = c.Check(get("/things/seven", 200, `{"thing": {"id": 7, "name": "a"}}`))
	if !has(vs, "GET /things/{id}", "request", "/path/id", KindType) {
		t.Errorf("a non-integer path parameter not caught:\n%s", list(vs))
	}
}

func TestCatchesAnUnknownOperationAndAnUndocumentedStatus(t *testing.T) {
	c := things(t)
	vs := c.Check(get("/gadgets/7", 200, `{}`))
	if !has(vs, "GET /gadgets/{id}", "request", "", KindUnknownOperation) {
		t.Errorf("unknown path not caught:\n%s", list(vs))
	}
	if vs := c.Check(Exchange{Method: http.MethodDelete, Path: "/things/7", RequestHeader: auth, Status: 204}); !has(vs, "DELETE /things/{id}", "request", "", KindUnknownOperation) {
		t.Errorf("unknown method not caught:\n%s", list(vs))
	}
	vs = c.Check(get("/things/7", 500, `{"error": {"code": "server_error"}}`))
	if !has(vs, "GET /things/{id}", "response 500", "", KindUndocumentedStatus) {
		t.Errorf("undocumented 500 not caught:\n%s", list(vs))
	}
	// "4xx" in lower case (as hcloud-openapi writes it) documents 422.
	vs = c.Check(post("/things", `{"name": "a"}`, 422, `{"error": {}}`))
	if !has(vs, "POST /things", "response 422", "/error/code", KindRequired) {
		t.Errorf("a 4xx error body is not checked against its schema:\n%s", list(vs))
	}
}

func TestCatchesAMissingToken(t *testing.T) {
	ex := get("/things/7", 200, `{"thing": {"id": 7, "name": "a"}}`)
	ex.RequestHeader = http.Header{}
	if vs := things(t).Check(ex); !has(vs, "GET /things/{id}", "request", "", KindSecurity) {
		t.Errorf("request without a bearer token not caught:\n%s", list(vs))
	}
}

func TestALiteralSegmentWinsOverATemplate(t *testing.T) {
	c := things(t)
	if op := c.Operation(http.MethodGet, "/things/7/actions/poke"); op != "GET /things/{id}/actions/poke" {
		t.Errorf("poke = %q", op)
	}
	if op := c.Operation(http.MethodGet, "/things/7/actions/12"); op != "GET /things/{id}/actions/{action_id}" {
		t.Errorf("action 12 = %q", op)
	}
}

func TestDedupeKeepsOnePerOperationPointerAndKind(t *testing.T) {
	c := things(t)
	var all []Violation
	for _, body := range []string{`{"thing": {"id": 1, "name": "a", "tags": [null, null]}}`, `{"thing": {"id": 2, "name": "b", "tags": [null]}}`} {
		all = append(all, c.Check(get("/things/1", 200, body))...)
	}
	if len(all) != 3 {
		t.Fatalf("violations = %d, want 3:\n%s", len(all), list(all))
	}
	if d := Dedupe(all); len(d) != 1 || d[0].Pointer != "/thing/tags/*" || d[0].Kind != KindNull {
		t.Errorf("deduplicated:\n%s", list(d))
	}
}

// TestOpenAPI31NullNeedsTheNullType checks a 3.1 document by its rules:
// nullable is gone, a null is valid only where "null" is one of the types.
func TestOpenAPI31NullNeedsTheNullType(t *testing.T) {
	doc := strings.NewReplacer(`"3.0.3"`, `"3.1.0"`, `"type": "string", "nullable": true`, `"type": ["string", "null"]`).Replace(thingsDoc)
	c, err := Load([]byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	vs := c.Check(get("/things/7", 200, `{"thing": {"id": 7, "name": null, "note": null}}`))
	if len(vs) != 1 || vs[0].Pointer != "/thing/name" {
		t.Errorf("3.1: want one violation at /thing/name:\n%s", list(vs))
	}
}

func TestRefusesWhatIsNotOpenAPI3(t *testing.T) {
	if _, err := Load([]byte(`{"swagger": "2.0", "paths": {}}`)); err == nil || !strings.Contains(err.Error(), "OpenAPI 3") {
		t.Errorf("swagger 2: %v", err)
	}
}
