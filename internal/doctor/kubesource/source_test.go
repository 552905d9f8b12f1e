package kubesource

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/json"
	"io"
	"log"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ohmytalos/ohmytalos/internal/doctor"
	"github.com/ohmytalos/ohmytalos/internal/testpki"
)

type pki struct {
	caPEM, serverCert, serverKey, clientCert, clientKey []byte
	caPool                                              *x509.CertPool
}

func newPKI(t *testing.T) pki {
	now := time.Now()
	ca, caKey, caPEM, _ := testpki.Issue(t, &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "kubernetes"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(time.Hour), IsCA: true, BasicConstraintsValid: true,
		KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature}, nil, nil)
	_, _, sc, sk := testpki.Issue(t, &x509.Certificate{SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: "kube-apiserver"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(time.Hour), IPAddresses: []net.IP{net.ParseIP("127.0.0.1")},
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}, KeyUsage: x509.KeyUsageDigitalSignature}, ca, caKey)
	_, _, cc, ck := testpki.Issue(t, &x509.Certificate{SerialNumber: big.NewInt(3), Subject: pkix.Name{CommonName: "admin", Organization: []string{"system:masters"}},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(time.Hour),
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}, KeyUsage: x509.KeyUsageDigitalSignature}, ca, caKey)
	pool := x509.NewCertPool()
	pool.AddCert(ca)
	return pki{caPEM: caPEM, serverCert: sc, serverKey: sk, clientCert: cc, clientKey: ck, caPool: pool}
}

// apiServer serves the few endpoints the source reads, requiring a client
// certificate signed by the cluster CA, like kube-apiserver does.
func apiServer(t *testing.T, p pki, routes map[string]any) *httptest.Server {
	t.Helper()
	mux := http.NewServeMux()
	for path, body := range routes {
		mux.HandleFunc(path, func(w http.ResponseWriter, r *http.Request) {
			if len(r.TLS.PeerCertificates) == 0 || r.TLS.PeerCertificates[0].Subject.CommonName != "admin" {
				w.WriteHeader(http.StatusUnauthorized)
				return
			}
			if s, ok := body.(int); ok {
				w.WriteHeader(s)
				_, _ = w.Write([]byte(`{"kind":"Status","message":"the server could not find the requested resource"}`))
				return
			}
			_ = json.NewEncoder(w).Encode(body)
		})
	}
	srv := httptest.NewUnstartedServer(mux)
	srv.Config.ErrorLog = log.New(io.Discard, "", 0) // rejected handshakes are expected
	pair, err := tls.X509KeyPair(p.serverCert, p.serverKey)
	if err != nil {
		t.Fatal(err)
	}
	srv.TLS = &tls.Config{Certificates: []tls.Certificate{pair}, ClientAuth: tls.RequireAndVerifyClientCert, ClientCAs: p.caPool}
	srv.StartTLS()
	t.Cleanup(srv.Close)
	return srv
}

func kubeconfigFor(server string, p pki) []byte {
	b64 := base64.StdEncoding.EncodeToString
	return []byte(`apiVersion: v1
kind: Config
current-context: admin@prod
clusters:
- name: other
  cluster:
    server: https://192.0.2.1:6443
- name: prod
  cluster:
    server: ` + server + `
    certificate-authority-data: ` + b64(p.caPEM) + `
users:
- name: admin@prod
  user:
    client-certificate-data: ` + b64(p.clientCert) + `
    client-key-data: ` + b64(p.clientKey) + `
contexts:
- name: other
  context: {cluster: other, user: admin@prod}
- name: admin@prod
  context:
    cluster: prod
    user: admin@prod
    namespace: default
`)
}

func ciliumDaemonSet(agentCaps, cleanCaps []string, mountCgroup bool) map[string]any {
	inits := []any{map[string]any{"name": "config"}, map[string]any{"name": "clean-cilium-state",
		"securityContext": map[string]any{"capabilities": map[string]any{"add": cleanCaps, "drop": []string{"ALL"}}}}}
	if mountCgroup {
		inits = append(inits, map[string]any{"name": "mount-cgroup"})
	}
	return map[string]any{"kind": "DaemonSet", "spec": map[string]any{"template": map[string]any{"spec": map[string]any{
		"containers": []any{map[string]any{"name": "cilium-agent",
			"env":             []any{map[string]any{"name": "K8S_NODE_NAME"}, map[string]any{"name": "KUBERNETES_SERVICE_HOST", "value": "localhost"}, map[string]any{"name": "KUBERNETES_SERVICE_PORT", "value": "7445"}},
			"securityContext": map[string]any{"capabilities": map[string]any{"add": agentCaps, "drop": []string{"ALL"}}}}},
		"initContainers": inits}}}}
}

func TestSourceReadsNodesAndCilium(t *testing.T) {
	p := newPKI(t)
	talosCaps := []string{"CHOWN", "KILL", "NET_ADMIN", "NET_RAW", "IPC_LOCK", "SYS_ADMIN", "SYS_RESOURCE", "DAC_OVERRIDE", "FOWNER", "SETGID", "SETUID"}
	srv := apiServer(t, p, map[string]any{
		"/api/v1/nodes": map[string]any{"kind": "NodeList", "metadata": map[string]any{}, "items": []any{
			map[string]any{"metadata": map[string]any{"name": "cp-1", "labels": map[string]string{"node.kubernetes.io/exclude-from-external-load-balancers": ""}}, "spec": map[string]any{"providerID": "hcloud://101"}},
			map[string]any{"metadata": map[string]any{"name": "worker-1"}, "spec": map[string]any{"providerID": "talos://metal/10.0.2.1"}},
		}},
		"/apis/apps/v1/namespaces/kube-system/daemonsets/cilium":  ciliumDaemonSet(talosCaps, []string{"NET_ADMIN", "SYS_ADMIN", "SYS_RESOURCE"}, false),
		"/api/v1/namespaces/kube-system/configmaps/cilium-config": map[string]any{"data": map[string]string{"cgroup-root": "/sys/fs/cgroup", "mtu": "1450"}},
	})
	src, err := New(kubeconfigFor(srv.URL, p), "")
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	nodes, err := src.Nodes(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(nodes) != 2 || nodes[0].ProviderID != "hcloud://101" || nodes[1].Name != "worker-1" {
		t.Fatalf("nodes = %+v", nodes)
	}
	if _, ok := nodes[0].Labels[doctor.LabelExcludeFromLB]; !ok {
		t.Errorf("labels lost: %+v", nodes[0])
	}
	c, err := src.CiliumConfig(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if c == nil || c.K8sServiceHost != "localhost" || c.K8sServicePort != 7445 || c.CgroupAutoMount || c.CgroupHostRoot != "/sys/fs/cgroup" ||
		len(c.AgentCaps) != 11 || len(c.CleanCaps) != 3 || c.MTU != 1450 {
		t.Fatalf("cilium = %+v", c)
	}

	// End to end through the doctor: Cilium passes, the talos:// node fails.
	rs := doctor.Run(ctx, &doctor.Env{Kube: src}, []string{"cilium-talos", "provider-id"}, nil)
	// Results come in registry order: provider-id, then cilium-talos.
	if rs[0].Status != doctor.StatusFail || rs[1].Status != doctor.StatusPass || !strings.Contains(strings.Join(rs[0].Evidence, "\n"), "worker-1: talos://metal/10.0.2.1") {
		t.Fatalf("doctor results = %+v", rs)
	}
}

func TestSourceCiliumDefaultsAndAbsence(t *testing.T) {
	p := newPKI(t)
	chartDefault := []string{"CHOWN", "KILL", "NET_ADMIN", "NET_RAW", "IPC_LOCK", "SYS_MODULE", "SYS_ADMIN", "SYS_RESOURCE", "DAC_OVERRIDE", "FOWNER", "SETGID", "SETUID"}
	srv := apiServer(t, p, map[string]any{
		"/apis/apps/v1/namespaces/kube-system/daemonsets/cilium":  ciliumDaemonSet(chartDefault, []string{"NET_ADMIN", "SYS_MODULE", "SYS_ADMIN", "SYS_RESOURCE"}, true),
		"/api/v1/namespaces/kube-system/configmaps/cilium-config": http.StatusNotFound,
	})
	src, err := New(kubeconfigFor(srv.URL, p), "admin@prod")
	if err != nil {
		t.Fatal(err)
	}
	c, err := src.CiliumConfig(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if !c.CgroupAutoMount || c.CgroupHostRoot != "" {
		t.Fatalf("cilium = %+v", c)
	}
	rs := doctor.Run(context.Background(), &doctor.Env{Kube: src}, []string{"cilium-talos"}, nil)
	if rs[0].Status != doctor.StatusFail || !strings.Contains(strings.Join(rs[0].Evidence, "\n"), "SYS_MODULE is requested") {
		t.Fatalf("cilium-talos = %+v", rs[0])
	}

	none := apiServer(t, p, map[string]any{"/apis/apps/v1/namespaces/kube-system/daemonsets/cilium": http.StatusNotFound})
	src, err = New(kubeconfigFor(none.URL, p), "")
	if err != nil {
		t.Fatal(err)
	}
	if c, err := src.CiliumConfig(context.Background()); err != nil || c != nil {
		t.Fatalf("absent Cilium: %+v, %v", c, err)
	}
}

func TestSourceRejectedAndUntrusted(t *testing.T) {
	p := newPKI(t)
	srv := apiServer(t, p, map[string]any{"/api/v1/nodes": map[string]any{}})
	// A kubeconfig trusting another CA must not talk to this server.
	other := newPKI(t)
	kc := kubeconfigFor(srv.URL, other)
	src, err := New(kc, "")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := src.Nodes(context.Background()); err == nil || !strings.Contains(err.Error(), "certificate") {
		t.Fatalf("untrusted server accepted: %v", err)
	}
}

func TestParseKubeconfigErrors(t *testing.T) {
	p := newPKI(t)
	good := string(kubeconfigFor("https://127.0.0.1:6443", p))
	cases := map[string]struct{ kc, ctx, want string }{
		"unknown context":         {good, "nope", `no context "nope"`},
		"no current":              {strings.Replace(good, "current-context: admin@prod", "", 1), "", "no current-context"},
		"http server":             {strings.Replace(good, "https://127.0.0.1:6443", "http://127.0.0.1:6443", 1), "", "not an https:// URL"},
		"exec without apiVersion": {strings.Replace(good, "    client-certificate-data:", "    exec: {command: aws}\n    client-certificate-data:", 1), "", "apiVersion must be specified"},
		"bad key":                 {strings.Replace(good, "client-key-data: ", "client-key-data: QUJD", 1), "", ""},
		"undefined user":          {strings.Replace(good, "user: admin@prod\n    namespace", "user: ghost\n    namespace", 1), "", `user "ghost", which is not defined`},
		"undefined cluster":       {strings.Replace(good, "cluster: prod\n", "cluster: ghost\n", 1), "", `cluster "ghost", which is not defined`},
	}
	for name, c := range cases {
		_, err := New([]byte(c.kc), c.ctx)
		if err == nil {
			t.Errorf("%s: accepted", name)
			continue
		}
		if c.want != "" && !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", name, err, c.want)
		}
		if strings.Contains(err.Error(), "PRIVATE KEY") {
			t.Errorf("%s: key material in error: %v", name, err)
		}
	}
}

func TestLoadResolvesRelativeFiles(t *testing.T) {
	p := newPKI(t)
	srv := apiServer(t, p, map[string]any{"/api/v1/nodes": map[string]any{"items": []any{map[string]any{"metadata": map[string]any{"name": "cp-1"}}}}})
	dir := t.TempDir()
	for name, data := range map[string][]byte{"ca.crt": p.caPEM, "admin.crt": p.clientCert, "admin.key": p.clientKey} {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	kc := `current-context: c
clusters: [{name: k, cluster: {server: "` + srv.URL + `", certificate-authority: ca.crt}}]
users: [{name: u, user: {client-certificate: admin.crt, client-key: admin.key}}]
contexts: [{name: c, context: {cluster: k, user: u}}]
`
	path := filepath.Join(dir, "kubeconfig")
	if err := os.WriteFile(path, []byte(kc), 0o600); err != nil {
		t.Fatal(err)
	}
	src, err := Load(path, "")
	if err != nil {
		t.Fatal(err)
	}
	nodes, err := src.Nodes(context.Background())
	if err != nil || len(nodes) != 1 {
		t.Fatalf("nodes = %+v, %v", nodes, err)
	}
}

// sourceFor is a Source over a test API server that answers routes.
func sourceFor(t *testing.T, routes map[string]any) *Source {
	t.Helper()
	p := newPKI(t)
	srv := apiServer(t, p, routes)
	src, err := New(kubeconfigFor(srv.URL, p), "")
	if err != nil {
		t.Fatal(err)
	}
	return src
}
