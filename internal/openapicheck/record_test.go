package openapicheck

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func TestRecorderKeepsRequestAndResponse(t *testing.T) {
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusCreated)
		io.WriteString(w, `{"echo": `+string(b)+`}`)
	})
	rec := NewRecorder(h)
	srv := httptest.NewServer(rec)
	defer srv.Close()
	resp, err := http.Post(srv.URL+"/things?x=1", "application/json", strings.NewReader(`{"name": "a"}`))
	if err != nil {
		t.Fatal(err)
	}
	got, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	exs := rec.Exchanges()
	if len(exs) != 1 {
		t.Fatalf("exchanges = %d", len(exs))
	}
	ex := exs[0]
	if ex.Method != "POST" || ex.Path != "/things" || ex.RawQuery != "x=1" || string(ex.RequestBody) != `{"name": "a"}` ||
		ex.Status != 201 || string(ex.ResponseBody) != string(got) || ex.ResponseHeader.Get("Content-Type") != "application/json" {
		t.Errorf("recorded %+v", ex)
	}
}
