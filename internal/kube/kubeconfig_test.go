package kube

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
)

const twoContexts = `apiVersion: v1
kind: Config
current-context: admin@b
clusters:
- name: a
  cluster: {server: "https://192.0.2.1:6443"}
- name: b
  cluster: {server: "https://192.0.2.2:6443/", tls-server-name: api.b}
users:
- name: admin
  user: {token: secret-token}
contexts:
- name: admin@a
  context: {cluster: a, user: admin}
- name: admin@b
  context: {cluster: b, user: admin}
`

func TestContextsCurrentFirst(t *testing.T) {
	names, current, err := Contexts([]byte(twoContexts))
	if err != nil || current != "admin@b" || !slices.Equal(names, []string{"admin@b", "admin@a"}) {
		t.Fatalf("Contexts = %v %q %v", names, current, err)
	}
	rc, err := Kubeconfig{Data: []byte(twoContexts)}.RESTConfig()
	if err != nil || rc.Host != "https://192.0.2.2:6443/" || rc.TLSClientConfig.ServerName != "api.b" || rc.BearerToken != "secret-token" {
		t.Fatalf("current context config = %+v, %v", rc, err)
	}
	named, err := Kubeconfig{Data: []byte(twoContexts), Context: "admin@a"}.RESTConfig()
	if err != nil || named.Host != "https://192.0.2.1:6443" {
		t.Fatalf("named context config = %+v, %v", named, err)
	}
	if _, err := (Kubeconfig{Data: []byte(twoContexts), Context: "nope"}).RESTConfig(); err == nil || !strings.Contains(err.Error(), `no context "nope"`) {
		t.Errorf("unknown context: %v", err)
	}
	all, err := Kubeconfig{Data: []byte(twoContexts)}.Contexts()
	if err != nil || len(all) != 2 || !all[0].Current || all[1].Server != "https://192.0.2.1:6443" {
		t.Errorf("contexts = %+v, %v", all, err)
	}
}

func TestKubeconfigRefusals(t *testing.T) {
	cases := map[string]struct{ from, to, want string }{
		"no current":        {"current-context: admin@b", "", "no current-context"},
		"http server":       {`"https://192.0.2.2:6443/"`, `"http://192.0.2.2:6443/"`, "not an https:// URL"},
		"undefined user":    {"context: {cluster: b, user: admin}", "context: {cluster: b, user: ghost}", `user "ghost", which is not defined`},
		"undefined cluster": {"context: {cluster: b, user: admin}", "context: {cluster: ghost, user: admin}", `cluster "ghost", which is not defined`},
	}
	for name, c := range cases {
		_, err := New([]byte(strings.Replace(twoContexts, c.from, c.to, 1)))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", name, err, c.want)
		}
	}
}

// A user with an exec plugin (the kind OIDC and cloud logins write) is
// accepted: client-go runs the command and sends the token it printed.
func TestExecPluginUser(t *testing.T) {
	_, api, kc := newTestClientToken(t, "unused")
	mark := filepath.Join(t.TempDir(), "mark")
	t.Setenv("EXEC_PLUGIN_MARK", mark)
	plugin, err := filepath.Abs("testdata/exec-plugin.sh")
	if err != nil {
		t.Fatal(err)
	}
	user := "    exec:\n      apiVersion: client.authentication.k8s.io/v1\n      command: " + plugin +
		"\n      args: [tok]\n      interactiveMode: Never\n"
	kc = kc[:strings.Index(kc, "users:")] + "users:\n- name: admin@demo\n  user:\n" + user + kc[strings.Index(kc, "contexts:"):]
	c, err := New([]byte(kc))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Apply(context.Background(), secret("hcloud", nil)); err != nil {
		t.Fatalf("apply with the exec plugin's token: %v", err)
	}
	if b, err := os.ReadFile(mark); err != nil || !strings.Contains(string(b), "ran") {
		t.Fatalf("the exec plugin did not run: %v %q", err, b)
	}
	if len(api.objects) != 1 {
		t.Errorf("objects = %v", api.objects)
	}
}

// $KUBECONFIG lists are merged by clientcmd's loading rules: the first
// file sets the current context, a later one may define it.
func TestKubeconfigList(t *testing.T) {
	_, _, kc := newTestClientToken(t, "tok")
	dir := t.TempDir()
	// The first file holds only the current context's name and the context;
	// the second the cluster and user (and a current-context that loses).
	first := "apiVersion: v1\nkind: Config\ncurrent-context: admin@demo\ncontexts:\n- name: admin@demo\n  context: {cluster: demo, user: admin@demo}\n"
	second := strings.Replace(kc, "current-context: admin@demo", "current-context: elsewhere", 1)
	a, b := filepath.Join(dir, "a"), filepath.Join(dir, "b")
	for p, data := range map[string]string{a: first, b: second} {
		if err := os.WriteFile(p, []byte(data), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	t.Setenv("KUBECONFIG", a+string(os.PathListSeparator)+b)
	c, err := Load(Kubeconfig{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Get(context.Background(), "v1", "Secret", "kube-system", "x"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("get through the merged kubeconfig: %v, want not found", err)
	}
	t.Setenv("KUBECONFIG", filepath.Join(dir, "missing"))
	if _, err := Load(Kubeconfig{}); err == nil || !strings.Contains(err.Error(), "--kubeconfig") {
		t.Errorf("no kubeconfig at all: %v", err)
	}
}

// connectProxy is an HTTP CONNECT proxy that records the targets.
type connectProxy struct {
	mu      sync.Mutex
	targets []string
}

func (p *connectProxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodConnect {
		http.Error(w, "CONNECT only", http.StatusMethodNotAllowed)
		return
	}
	p.mu.Lock()
	p.targets = append(p.targets, r.Host)
	p.mu.Unlock()
	up, err := net.Dial("tcp", r.Host)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	hj, _ := w.(http.Hijacker)
	conn, buf, err := hj.Hijack()
	if err != nil {
		up.Close()
		return
	}
	_, _ = conn.Write([]byte("HTTP/1.1 200 Connection established\r\n\r\n"))
	go func() { _, _ = io.Copy(up, bufio.NewReader(buf)); up.Close() }()
	_, _ = io.Copy(conn, up)
	conn.Close()
}

// A cluster's proxy-url carries the API traffic through that proxy.
func TestProxyURL(t *testing.T) {
	_, _, kc := newTestClientToken(t, "tok")
	proxy := &connectProxy{}
	srv := httptest.NewServer(proxy)
	t.Cleanup(srv.Close)
	ps := srv.URL
	kc = strings.Replace(kc, "    certificate-authority-data:", "    proxy-url: "+ps+"\n    certificate-authority-data:", 1)
	c, err := New([]byte(kc))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Apply(context.Background(), secret("hcloud", nil)); err != nil {
		t.Fatal(err)
	}
	proxy.mu.Lock()
	defer proxy.mu.Unlock()
	if len(proxy.targets) == 0 || !strings.HasPrefix(c.Server(), "https://"+proxy.targets[0]) {
		t.Fatalf("proxy saw %v, want the API server %s", proxy.targets, c.Server())
	}
}
