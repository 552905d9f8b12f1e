package kubeconfig

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const newCfg = `apiVersion: v1
kind: Config
clusters:
- name: demo
  cluster: {server: "https://10.0.1.100:6443"}
users:
- name: admin@demo
  user: {client-certificate-data: AAA}
contexts:
- name: admin@demo
  context: {cluster: demo, user: admin@demo}
current-context: admin@demo
`

const oldCfg = `apiVersion: v1
kind: Config
clusters:
- name: other
  cluster: {server: "https://other:6443"}
- name: demo
  cluster: {server: "https://stale:6443"}
users:
- name: me
  user: {token: x}
contexts:
- name: other
  context: {cluster: other, user: me}
current-context: other
`

func TestMergeKeepsOthersReplacesSameNames(t *testing.T) {
	p := filepath.Join(t.TempDir(), "kube", "config")
	if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(p, []byte(oldCfg), 0o600)
	ctx, err := Merge(p, []byte(newCfg))
	if err != nil {
		t.Fatal(err)
	}
	if ctx != "admin@demo" {
		t.Errorf("context = %q", ctx)
	}
	b, _ := os.ReadFile(p)
	s := string(b)
	for _, want := range []string{"https://other:6443", "https://10.0.1.100:6443", "current-context: admin@demo", "name: me"} {
		if !strings.Contains(s, want) {
			t.Errorf("merged config lacks %q:\n%s", want, s)
		}
	}
	if strings.Contains(s, "stale") {
		t.Error("same-named cluster not replaced")
	}
	fi, _ := os.Stat(p)
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("mode %v", fi.Mode().Perm())
	}
	srv, err := Server(b)
	if err != nil || srv != "https://10.0.1.100:6443" {
		t.Errorf("server = %q %v", srv, err)
	}
}

func TestMergeIntoMissingFileAndBadFile(t *testing.T) {
	p := filepath.Join(t.TempDir(), "config")
	if _, err := Merge(p, []byte(newCfg)); err != nil {
		t.Fatal(err)
	}
	bad := filepath.Join(t.TempDir(), "config")
	os.WriteFile(bad, []byte("clusters: [unclosed"), 0o600)
	if _, err := Merge(bad, []byte(newCfg)); err == nil || !strings.Contains(err.Error(), "not a kubeconfig") {
		t.Errorf("err = %v", err)
	}
}
