package kubesource

import (
	"context"
	"crypto/tls"
	"encoding/base64"
	"encoding/json"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ohmytalos/ohmytalos/internal/doctor"
)

// TestDoctorOnExecPluginKubeconfig runs the doctor on a kubeconfig it did
// not build, whose user logs in with an exec plugin (as OIDC and cloud
// logins do): the plugin runs, and its token reaches the API server both
// for the checks' reads and for kubeconfig-reachable's /version.
func TestDoctorOnExecPluginKubeconfig(t *testing.T) {
	p := newPKI(t)
	mux := http.NewServeMux()
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer from-plugin" {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		switch r.URL.Path {
		case "/version":
			_, _ = io.WriteString(w, `{"major":"1","minor":"36","gitVersion":"v1.36.3"}`)
		case "/api/v1/nodes":
			_ = json.NewEncoder(w).Encode(map[string]any{"kind": "NodeList", "apiVersion": "v1", "metadata": map[string]any{}, "items": []any{
				map[string]any{"metadata": map[string]any{"name": "cp-1"}, "spec": map[string]any{"providerID": "hcloud://1"}},
			}})
		default:
			w.WriteHeader(http.StatusNotFound)
		}
	})
	srv := httptest.NewUnstartedServer(mux)
	srv.Config.ErrorLog = log.New(io.Discard, "", 0)
	srv.TLS = serverTLS(t, p)
	srv.StartTLS()
	t.Cleanup(srv.Close)

	plugin, err := filepath.Abs("../../kube/testdata/exec-plugin.sh")
	if err != nil {
		t.Fatal(err)
	}
	mark := filepath.Join(t.TempDir(), "mark")
	t.Setenv("EXEC_PLUGIN_MARK", mark)
	kc := []byte(`apiVersion: v1
kind: Config
current-context: oidc@prod
clusters:
- name: prod
  cluster:
    server: ` + srv.URL + `
    certificate-authority-data: ` + base64.StdEncoding.EncodeToString(p.caPEM) + `
users:
- name: oidc
  user:
    exec:
      apiVersion: client.authentication.k8s.io/v1
      command: ` + plugin + `
      args: [from-plugin]
      interactiveMode: Never
contexts:
- name: oidc@prod
  context: {cluster: prod, user: oidc}
`)
	src, err := New(kc, "")
	if err != nil {
		t.Fatal(err)
	}
	rs := doctor.Run(context.Background(), &doctor.Env{Kube: src, Kubeconfig: kc}, []string{"kubeconfig-reachable", "provider-id"}, nil)
	for _, r := range rs {
		if r.Status != doctor.StatusPass {
			t.Errorf("%s = %s: %s %v", r.ID, r.Status, r.Explanation, r.Evidence)
		}
	}
	if b, err := os.ReadFile(mark); err != nil || !strings.Contains(string(b), "ran") {
		t.Fatalf("the exec plugin did not run: %v", err)
	}
}

// serverTLS serves the pki's server certificate without asking for a
// client certificate (the exec plugin's token authenticates).
func serverTLS(t *testing.T, p pki) *tls.Config {
	t.Helper()
	pair, err := tls.X509KeyPair(p.serverCert, p.serverKey)
	if err != nil {
		t.Fatal(err)
	}
	return &tls.Config{Certificates: []tls.Certificate{pair}}
}
