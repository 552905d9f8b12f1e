package kube

import (
	"slices"
	"strings"
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
	ep, err := ParseKubeconfig([]byte(twoContexts), "", "")
	if err != nil || ep.Server != "https://192.0.2.2:6443" || ep.TLS.ServerName != "api.b" || ep.Token != "secret-token" {
		t.Fatalf("current context endpoint = %+v, %v", ep, err)
	}
	if _, err := ParseKubeconfig([]byte(twoContexts), "nope", ""); err == nil || !strings.Contains(err.Error(), `no context "nope"`) {
		t.Errorf("unknown context: %v", err)
	}
}
