package cloud

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func TestCheckEndpoint(t *testing.T) {
	for ep, ok := range map[string]bool{"": true, "https://api.example.org/v1": true, "http://127.0.0.1:1/v1": true,
		"http://api.example.org/v1": false, "http://10.1.2.3/v1": false} {
		t.Setenv("HCLOUD_ENDPOINT", ep)
		err := CheckEndpoint("")
		if (err == nil) != ok {
			t.Errorf("%q: %v", ep, err)
		}
		if err != nil && (!strings.Contains(err.Error(), "HCLOUD_ENDPOINT") || !strings.Contains(err.Error(), "use https")) {
			t.Errorf("%q: the error names neither the variable nor the fix: %v", ep, err)
		}
	}
}

func TestIsSandboxNeedsTheSandboxsAnswer(t *testing.T) {
	marked := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set(SandboxHeader, "1")
		http.NotFound(w, r)
	}))
	defer marked.Close()
	plain := httptest.NewServer(http.NotFoundHandler())
	defer plain.Close()
	if !IsSandbox(context.Background(), marked.URL+"/v1") {
		t.Error("the sandbox's endpoint is not recognised")
	}
	if IsSandbox(context.Background(), plain.URL+"/v1") {
		t.Error("a loopback endpoint without the sandbox's answer counts as the sandbox")
	}
	if IsSandbox(context.Background(), "https://api.hetzner.cloud/v1") {
		t.Error("Hetzner counts as the sandbox")
	}
}
