package steps

import (
	"context"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/ohmytalos/ohmytalos/internal/engine"
)

const talosKubeconfig = `apiVersion: v1
kind: Config
clusters:
- name: demo
  cluster:
    server: https://10.0.1.100:6443
    certificate-authority-data: Q0E=
users:
- name: admin@demo
  user:
    client-certificate-data: Q0VSVA==
    client-key-data: S0VZ
contexts:
- name: admin@demo
  context:
    cluster: demo
    namespace: default
    user: admin@demo
current-context: admin@demo
`

type kcView struct {
	Clusters []struct {
		Name    string `yaml:"name"`
		Cluster struct {
			Server string `yaml:"server"`
			CA     string `yaml:"certificate-authority-data"`
		} `yaml:"cluster"`
	} `yaml:"clusters"`
	Contexts []struct {
		Name    string `yaml:"name"`
		Context struct {
			Cluster, User, Namespace string
		} `yaml:"context"`
	} `yaml:"contexts"`
	Current string `yaml:"current-context"`
}

func parseView(t *testing.T, b []byte) kcView {
	t.Helper()
	var v kcView
	if err := yaml.Unmarshal(b, &v); err != nil {
		t.Fatal(err)
	}
	return v
}

func TestRewriteKubeconfig(t *testing.T) {
	out, err := rewriteKubeconfig([]byte(talosKubeconfig), []kubeTarget{
		{"demo", "203.0.113.11"}, {"demo-cp-2", "203.0.113.12"}, {"demo-cp-3", "2001:db8::3"},
	})
	if err != nil {
		t.Fatal(err)
	}
	v := parseView(t, out)
	if v.Current != "admin@demo" || len(v.Clusters) != 3 || len(v.Contexts) != 3 {
		t.Fatalf("kubeconfig = %s", out)
	}
	wantServers := []string{"https://203.0.113.11:6443", "https://203.0.113.12:6443", "https://[2001:db8::3]:6443"}
	for i, c := range v.Clusters {
		if c.Cluster.Server != wantServers[i] || c.Cluster.CA != "Q0E=" {
			t.Errorf("cluster %d = %+v, want server %s with the CA", i, c, wantServers[i])
		}
	}
	if c := v.Contexts[1]; c.Name != "admin@demo-cp-2" || c.Context.Cluster != "demo-cp-2" || c.Context.User != "admin@demo" || c.Context.Namespace != "default" {
		t.Errorf("alternative context = %+v", c)
	}
	if !strings.Contains(string(out), "client-key-data: S0VZ") {
		t.Error("the user's credentials were lost")
	}

	same, err := rewriteKubeconfig([]byte(talosKubeconfig), nil)
	if err != nil || string(same) != talosKubeconfig {
		t.Errorf("no targets must keep the kubeconfig (tailscale): %v", err)
	}
	if _, err := rewriteKubeconfig([]byte("current-context: nope\n"), []kubeTarget{{"x", "1.2.3.4"}}); err == nil {
		t.Error("a kubeconfig without its current context was accepted")
	}
}

// Bootstrap stores a kubeconfig whose current context names a control
// plane's public address (the VIP is private), the others as alternative
// contexts, and records the addresses for the certSANs.
func TestBootstrapKubeconfigNamesPublicAddresses(t *testing.T) {
	t.Parallel()
	w := newWorld(t, "../examples/seed.yaml")
	if _, err := w.apply(t, context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	env := w.env(t)
	kc := storedSecret(t, env, secretKubeconfig)
	public := map[string]string{}
	for _, s := range w.SB.HCloud.Servers() {
		public[s.Name] = s.PublicIPv4
	}
	v := parseView(t, kc)
	if len(v.Clusters) != 3 {
		t.Fatalf("clusters = %+v", v.Clusters)
	}
	seen := map[string]bool{}
	for _, c := range v.Clusters {
		if strings.Contains(c.Cluster.Server, "10.0.1.100") {
			t.Errorf("cluster %s names the private VIP", c.Name)
		}
		seen[c.Cluster.Server] = true
	}
	for _, n := range []string{"demo-cp-1", "demo-cp-2", "demo-cp-3"} {
		if !seen["https://"+public[n]+":6443"] {
			t.Errorf("no cluster entry for %s (%s): %v", n, public[n], seen)
		}
	}
	if sans := controlPlaneSANs(&engine.Env{Spec: w.Spec, State: env.State}); len(sans) != 3 {
		t.Errorf("recorded control plane SANs = %v", sans)
	}
}
