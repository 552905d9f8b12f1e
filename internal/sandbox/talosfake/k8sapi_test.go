package talosfake_test

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"gopkg.in/yaml.v3"
)

// kubeClient builds an HTTP client from a kubeconfig, as kubectl would.
func kubeClient(t *testing.T, kubeconfig []byte) (*http.Client, string) {
	t.Helper()

	var kc struct {
		Clusters []struct {
			Cluster struct {
				Server string `yaml:"server"`
				CA     string `yaml:"certificate-authority-data"`
			} `yaml:"cluster"`
		} `yaml:"clusters"`
		Users []struct {
			User struct {
				Cert string `yaml:"client-certificate-data"`
				Key  string `yaml:"client-key-data"`
			} `yaml:"user"`
		} `yaml:"users"`
	}

	if err := yaml.Unmarshal(kubeconfig, &kc); err != nil {
		t.Fatal(err)
	}

	dec := func(s string) []byte {
		b, err := base64.StdEncoding.DecodeString(s)
		if err != nil {
			t.Fatal(err)
		}

		return b
	}

	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(dec(kc.Clusters[0].Cluster.CA)) {
		t.Fatal("kubeconfig CA is not PEM")
	}

	cert, err := tls.X509KeyPair(dec(kc.Users[0].User.Cert), dec(kc.Users[0].User.Key))
	if err != nil {
		t.Fatal(err)
	}

	tr := &http.Transport{TLSClientConfig: &tls.Config{MinVersion: tls.VersionTLS12, RootCAs: pool, Certificates: []tls.Certificate{cert}}}
	t.Cleanup(tr.CloseIdleConnections)

	return &http.Client{Transport: tr, Timeout: 10 * time.Second}, kc.Clusters[0].Cluster.Server
}

func getJSON(t *testing.T, ctx context.Context, c *http.Client, url string, into any) int {
	t.Helper()

	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}

	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()

	if err := json.NewDecoder(resp.Body).Decode(into); err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}

	return resp.StatusCode
}

func TestKubernetesAPIAfterBootstrap(t *testing.T) {
	t.Parallel()

	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()

	fx := must(t, vipFixture)
	e := newEnv(t)
	cp := e.start(91, fx.ControlPlane, nil)
	cp2 := e.start(92, fx.ControlPlane, nil)
	wk := e.start(93, fx.Worker, nil)

	if cp.KubernetesEndpoint() != "" {
		t.Fatal("Kubernetes API served before bootstrap")
	}

	c := dial(t, fx.Talosconfig, cp)
	if _, err := c.BootstrapOnce(ctx); err != nil {
		t.Fatal(err)
	}

	if err := cp.KubeErr(); err != nil {
		t.Fatal(err)
	}

	// kube-apiserver runs on every control plane once etcd is up, never on workers.
	if cp2.KubernetesEndpoint() == "" || wk.KubernetesEndpoint() != "" {
		t.Fatalf("Kubernetes API endpoints: cp2 %q, worker %q", cp2.KubernetesEndpoint(), wk.KubernetesEndpoint())
	}

	kubeconfig, err := c.Kubeconfig(ctx)
	if err != nil {
		t.Fatal(err)
	}

	hc, server := kubeClient(t, kubeconfig)
	// Talos writes the config's cluster endpoint, not the dialled address.
	if want := "https://10.0.1.100:6443"; server != want {
		t.Fatalf("kubeconfig server = %s, want %s", server, want)
	}

	server = "https://" + cp.KubernetesEndpoint()

	var version struct {
		GitVersion string `json:"gitVersion"`
	}

	if code := getJSON(t, ctx, hc, server+"/version", &version); code != http.StatusOK || !strings.HasPrefix(version.GitVersion, "v1.") {
		t.Fatalf("/version = %d %+v", code, version)
	}

	var nodes struct {
		Kind  string `json:"kind"`
		Items []struct {
			Metadata struct {
				Name   string            `json:"name"`
				Labels map[string]string `json:"labels"`
			} `json:"metadata"`
			Spec struct {
				ProviderID string `json:"providerID"`
				Taints     []struct {
					Key    string `json:"key"`
					Effect string `json:"effect"`
				} `json:"taints"`
			} `json:"spec"`
		} `json:"items"`
	}

	if code := getJSON(t, ctx, hc, server+"/api/v1/nodes", &nodes); code != http.StatusOK || nodes.Kind != "NodeList" {
		t.Fatalf("/api/v1/nodes = %d %s", code, nodes.Kind)
	}

	var names []string

	for _, n := range nodes.Items {
		names = append(names, n.Metadata.Name)

		_, isCP := n.Metadata.Labels["node-role.kubernetes.io/control-plane"]
		_, excluded := n.Metadata.Labels["node.kubernetes.io/exclude-from-external-load-balancers"]
		tainted := len(n.Spec.Taints) == 1 && n.Spec.Taints[0].Effect == "NoSchedule"

		if wantCP := n.Metadata.Name != "node-93"; isCP != wantCP || excluded != wantCP || tainted != wantCP {
			t.Errorf("%s: control-plane label %v, LB exclusion %v, taint %v; want %v", n.Metadata.Name, isCP, excluded, tainted, wantCP)
		}

		if !strings.HasPrefix(n.Spec.ProviderID, "hcloud://9") {
			t.Errorf("%s: providerID %q", n.Metadata.Name, n.Spec.ProviderID)
		}
	}

	if want := []string{"node-91", "node-92", "node-93"}; !slices.Equal(names, want) {
		t.Fatalf("nodes = %v, want %v", names, want)
	}

	var cms struct {
		Kind  string `json:"kind"`
		Items []any  `json:"items"`
	}

	if code := getJSON(t, ctx, hc, server+"/api/v1/namespaces/kube-system/configmaps", &cms); code != http.StatusOK || cms.Kind != "ConfigMapList" || len(cms.Items) != 0 {
		t.Fatalf("configmaps = %d %+v", code, cms)
	}

	// Without a client certificate the API answers 401, as kube-apiserver does.
	anon := &http.Client{Transport: &http.Transport{TLSClientConfig: hc.Transport.(*http.Transport).TLSClientConfig.Clone()}}
	anon.Transport.(*http.Transport).TLSClientConfig.Certificates = nil

	var status struct {
		Code int `json:"code"`
	}

	if code := getJSON(t, ctx, anon, server+"/api/v1/nodes", &status); code != http.StatusUnauthorized {
		t.Fatalf("anonymous /api/v1/nodes = %d", code)
	}

	cp.Stop()

	if _, err := hc.Get(server + "/version"); err == nil { //nolint:noctx // stopped server, immediate refusal
		t.Fatal("Kubernetes API still served after the node stopped")
	}

}
