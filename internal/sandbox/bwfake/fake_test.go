package bwfake

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

const (
	tokenID = "6a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d"
	dupA    = "7b2c3d4e-5f60-4b7c-8d9e-0f1a2b3c4d5e"
	dupB    = "8c3d4e5f-6071-4c8d-9eaf-1a2b3c4d5e6f"
)

func newServer(t *testing.T, locked bool) *httptest.Server {
	t.Helper()
	f := New(Options{MasterPassword: "correct horse", Locked: locked, Items: []Item{
		{ID: strings.ToUpper(tokenID), Name: "hcloud", Password: "tok-s3cret", Fields: []Field{{Name: "region", Value: "fsn1"}}},
		{ID: dupA, Name: "shared", Password: "a"},
		{ID: dupB, Name: "shared", Password: "b"},
		{ID: "9d4e5f60-7182-4d9e-afb0-2b3c4d5e6f70", Name: "no-password"},
	}})
	srv := httptest.NewServer(f)
	t.Cleanup(srv.Close)
	return srv
}

type answer struct {
	status int
	raw    string
	env    struct {
		Success bool            `json:"success"`
		Message string          `json:"message"`
		Data    json.RawMessage `json:"data"`
	}
}

func do(t *testing.T, srv *httptest.Server, method, path, body string, hdr map[string]string) answer {
	t.Helper()
	req, err := http.NewRequest(method, srv.URL+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	for k, v := range hdr {
		if k == "Host" {
			req.Host = v
		} else {
			req.Header.Set(k, v)
		}
	}
	resp, err := srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	a := answer{status: resp.StatusCode, raw: string(b)}
	_ = json.Unmarshal(b, &a.env)
	return a
}

func TestReads(t *testing.T) {
	srv := newServer(t, false)
	for _, tc := range []struct {
		name, path string
		status     int
		want       []string // substrings of the body
	}{
		{"password by id", "/object/password/" + tokenID, 200, []string{`"success":true`, `"object":"string"`, `"data":"tok-s3cret"`}},
		{"password by upper-case id", "/object/password/" + strings.ToUpper(tokenID), 200, []string{`"data":"tok-s3cret"`}},
		{"item by id", "/object/item/" + tokenID, 200, []string{`"object":"item"`, `"name":"hcloud"`, `"name":"region"`, `"type":1`}},
		{"item by exact name", "/object/item/hcloud", 200, []string{`"id":"` + tokenID + `"`}},
		{"unknown id", "/object/item/ffffffff-ffff-4fff-bfff-ffffffffffff", 400, []string{`"success":false`, `"message":"Not found."`}},
		{"ambiguous search", "/object/password/shar", 400, []string{"More than one result was found", dupA, dupB}},
		// bw stops at the first exact name: two items of one name do not
		// make an error, which is why the product lists and filters itself.
		{"duplicate exact name", "/object/password/shared", 200, []string{`"object":"string"`}},
		{"password of an item without one", "/object/password/no-password", 400, []string{"Not found."}},
		{"search", "/list/object/items?search=SHA", 200, []string{`"object":"list"`, dupA, dupB}},
		{"search with no hit", "/list/object/items?search=zzz", 200, []string{`"data":[]`, `"object":"list"`}},
		{"status", "/status", 200, []string{`"object":"template"`, `"status":"unlocked"`, `"serverUrl":`}},
		{"unknown route", "/object", 404, []string{"Not Found"}},
	} {
		a := do(t, srv, http.MethodGet, tc.path, "", nil)
		if a.status != tc.status {
			t.Errorf("%s: status %d, want %d (%s)", tc.name, a.status, tc.status, a.raw)
		}
		for _, w := range tc.want {
			if !strings.Contains(a.raw, w) {
				t.Errorf("%s: body %s lacks %s", tc.name, a.raw, w)
			}
		}
	}
}

func TestLockedVaultRefusesReadsUntilUnlocked(t *testing.T) {
	srv := newServer(t, true)
	for _, p := range []string{"/object/password/" + tokenID, "/object/item/" + tokenID, "/list/object/items?search=h"} {
		if a := do(t, srv, http.MethodGet, p, "", nil); a.status != 400 || a.env.Message != "Vault is locked." {
			t.Errorf("GET %s while locked: %d %s", p, a.status, a.raw)
		}
	}
	if a := do(t, srv, http.MethodGet, "/status", "", nil); !strings.Contains(a.raw, `"status":"locked"`) {
		t.Errorf("status while locked: %s", a.raw)
	}
	for _, tc := range []struct{ body, msg string }{
		{`{}`, "Master password is required."},
		{`{"password":"wrong"}`, "Invalid master password."},
	} {
		if a := do(t, srv, http.MethodPost, "/unlock", tc.body, nil); a.status != 400 || a.env.Message != tc.msg {
			t.Errorf("unlock %s: %d %s", tc.body, a.status, a.raw)
		}
	}
	a := do(t, srv, http.MethodPost, "/unlock", `{"password":"correct horse"}`, nil)
	var msg struct{ Object, Title, Raw string }
	if err := json.Unmarshal(a.env.Data, &msg); err != nil || a.status != 200 || msg.Object != "message" || len(msg.Raw) < 64 {
		t.Fatalf("unlock: %d %s", a.status, a.raw)
	}
	if a := do(t, srv, http.MethodGet, "/object/password/"+tokenID, "", nil); a.status != 200 {
		t.Errorf("read after unlock: %d %s", a.status, a.raw)
	}
	do(t, srv, http.MethodPost, "/lock", "", nil)
	if a := do(t, srv, http.MethodGet, "/object/password/"+tokenID, "", nil); a.env.Message != "Vault is locked." {
		t.Errorf("read after lock: %s", a.raw)
	}
}

func TestOriginProtection(t *testing.T) {
	srv := newServer(t, false)
	for _, hdr := range []map[string]string{
		{"Origin": "https://evil.example"},
		{"Host": "vault.example.org:8087"},
	} {
		if a := do(t, srv, http.MethodGet, "/object/password/"+tokenID, "", hdr); a.status != 403 || a.raw != "" {
			t.Errorf("%v: %d %q; want 403 and no body", hdr, a.status, a.raw)
		}
	}
	if a := do(t, srv, http.MethodGet, "/status", "", map[string]string{"Host": "localhost:8087"}); a.status != 200 {
		t.Errorf("Host localhost: %d", a.status)
	}
}

func TestNewID(t *testing.T) {
	id := NewID()
	if !guid.MatchString(id) || id == NewID() {
		t.Errorf("NewID() = %q", id)
	}
}
