package kubeconfig

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"
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

// oldCfg holds an unrelated cluster and, under the new cluster's names,
// the operator's own entries with a token: none of them may be lost.
const oldCfg = `apiVersion: v1
kind: Config
clusters:
- name: z3k
  cluster: {server: "https://z3k:6443"}
- name: demo
  cluster: {server: "https://stale:6443"}
users:
- name: admin@z3k
  user: {token: z3k-token}
- name: admin@demo
  user: {token: keep-me}
contexts:
- name: admin@z3k
  context: {cluster: z3k, user: admin@z3k}
- name: admin@demo
  context: {cluster: demo, user: admin@demo}
current-context: admin@z3k
`

var now = time.Date(2026, 12, 1, 0, 30, 0, 0, time.UTC)

type kc struct {
	Current  string `yaml:"current-context"`
	Clusters []struct {
		Name    string `yaml:"name"`
		Cluster struct {
			Server string `yaml:"server"`
		} `yaml:"cluster"`
	} `yaml:"clusters"`
	Users []struct {
		Name string            `yaml:"name"`
		User map[string]string `yaml:"user"`
	} `yaml:"users"`
	Contexts []struct {
		Name    string `yaml:"name"`
		Context struct {
			Cluster string `yaml:"cluster"`
			User    string `yaml:"user"`
		} `yaml:"context"`
	} `yaml:"contexts"`
}

func read(t *testing.T, p string) kc {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	var k kc
	if err := yaml.Unmarshal(b, &k); err != nil {
		t.Fatal(err)
	}
	return k
}

func (k kc) server(cluster string) string {
	for _, c := range k.Clusters {
		if c.Name == cluster {
			return c.Cluster.Server
		}
	}
	return ""
}

func (k kc) user(name string) map[string]string {
	for _, u := range k.Users {
		if u.Name == name {
			return u.User
		}
	}
	return nil
}

func perm(t *testing.T, p string) os.FileMode {
	t.Helper()
	fi, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Mode().Perm()
}

func TestMergeKeepsEverythingAndRenamesConflicts(t *testing.T) {
	p := filepath.Join(t.TempDir(), "kube", "config")
	os.MkdirAll(filepath.Dir(p), 0o700)
	os.WriteFile(p, []byte(oldCfg), 0o644)
	os.Chmod(p, 0o644)
	res, err := Merge(p, []byte(newCfg), now)
	if err != nil {
		t.Fatal(err)
	}
	k := read(t, p)
	checks := []struct {
		what, got, want string
	}{
		{"context", res.Context, "admin@demo-1"},
		{"current-context", k.Current, "admin@demo-1"},
		{"kept cluster z3k", k.server("z3k"), "https://z3k:6443"},
		{"kept cluster demo", k.server("demo"), "https://stale:6443"},
		{"new cluster renamed", k.server("demo-1"), "https://10.0.1.100:6443"},
		{"kept user admin@z3k", k.user("admin@z3k")["token"], "z3k-token"},
		{"kept user admin@demo", k.user("admin@demo")["token"], "keep-me"},
		{"new user renamed", k.user("admin@demo-1")["client-certificate-data"], "AAA"},
		{"backup", res.Backup, p + ".bak-20261201T003000Z"},
		{"written", res.Written, p},
	}
	for _, c := range checks {
		if c.got != c.want {
			t.Errorf("%s = %q, want %q", c.what, c.got, c.want)
		}
	}
	for _, c := range k.Contexts {
		if c.Name == "admin@demo-1" && (c.Context.Cluster != "demo-1" || c.Context.User != "admin@demo-1") {
			t.Errorf("renamed context points at %+v", c.Context)
		}
		if c.Name == "admin@demo" && c.Context.Cluster != "demo" {
			t.Errorf("existing context changed: %+v", c.Context)
		}
	}
	if len(k.Contexts) != 3 || len(res.Renamed) != 3 {
		t.Errorf("contexts %d, renamed %v", len(k.Contexts), res.Renamed)
	}
	if b, _ := os.ReadFile(res.Backup); string(b) != oldCfg {
		t.Errorf("backup does not hold the old file:\n%s", b)
	}
	if m := perm(t, p); m != 0o600 {
		t.Errorf("mode %v, want 0600", m)
	}
	if m := perm(t, res.Backup); m != 0o600 {
		t.Errorf("backup mode %v, want 0600", m)
	}
}

func TestMergeTwiceChangesNothing(t *testing.T) {
	p := filepath.Join(t.TempDir(), "config")
	if _, err := Merge(p, []byte(newCfg), now); err != nil {
		t.Fatal(err)
	}
	res, err := Merge(p, []byte(newCfg), now.Add(time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	if res.Backup != "" || res.Written != "" || len(res.Renamed) != 0 || res.Context != "admin@demo" {
		t.Errorf("second merge of the same cluster: %+v", res)
	}
	if k := read(t, p); len(k.Clusters) != 1 || len(k.Users) != 1 || len(k.Contexts) != 1 {
		t.Errorf("entries duplicated: %+v", k)
	}
}

func TestMergeFollowsASymlinkedConfig(t *testing.T) {
	home := t.TempDir()
	target := filepath.Join(home, "dotfiles", "kubeconfig")
	os.MkdirAll(filepath.Dir(target), 0o755)
	os.WriteFile(target, []byte(oldCfg), 0o644)
	os.Chmod(target, 0o644)
	link := filepath.Join(home, ".kube", "config")
	os.MkdirAll(filepath.Dir(link), 0o700)
	if err := os.Symlink("../dotfiles/kubeconfig", link); err != nil {
		t.Fatal(err)
	}
	res, err := Merge(link, []byte(newCfg), now)
	if err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Lstat(link); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Fatalf("~/.kube/config is no longer a symlink: %v", err)
	}
	if res.Written != target || !strings.HasPrefix(res.Backup, target+".bak-") {
		t.Errorf("written %s, backup %s; want the link's target", res.Written, res.Backup)
	}
	if k := read(t, link); k.server("demo-1") == "" || k.user("admin@z3k")["token"] != "z3k-token" {
		t.Errorf("merge through the link lost entries: %+v", k)
	}
	if m := perm(t, target); m != 0o600 {
		t.Errorf("target mode %v", m)
	}
}

func TestMergeIntoMissingFileAndBadFile(t *testing.T) {
	p := filepath.Join(t.TempDir(), "config")
	res, err := Merge(p, []byte(newCfg), now)
	if err != nil {
		t.Fatal(err)
	}
	if res.Backup != "" || res.Context != "admin@demo" {
		t.Errorf("into a missing file: %+v", res)
	}
	srv, err := Server(mustRead(t, p))
	if err != nil || srv != "https://10.0.1.100:6443" {
		t.Errorf("server = %q %v", srv, err)
	}
	bad := filepath.Join(t.TempDir(), "config")
	os.WriteFile(bad, []byte("clusters: [unclosed"), 0o600)
	if _, err := Merge(bad, []byte(newCfg), now); err == nil || !strings.Contains(err.Error(), "not a kubeconfig") {
		t.Errorf("err = %v", err)
	}
	if b := mustRead(t, bad); string(b) != "clusters: [unclosed" {
		t.Errorf("a bad file was changed: %q", b)
	}
}

func mustRead(t *testing.T, p string) []byte {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestMergeKeepsCommentsAndOrder(t *testing.T) {
	p := filepath.Join(t.TempDir(), "config")
	old := "# my clusters, by hand\napiVersion: v1\nkind: Config\nclusters:\n- name: z3k # production\n  cluster: {server: \"https://z3k:6443\"}\n" +
		"users:\n- name: admin@z3k\n  user: {token: z3k-token}\ncontexts: []\ncurrent-context: \"\"\n"
	os.WriteFile(p, []byte(old), 0o600)
	if _, err := Merge(p, []byte(newCfg), now); err != nil {
		t.Fatal(err)
	}
	s := string(mustRead(t, p))
	for _, want := range []string{"# my clusters, by hand", "# production", "current-context: admin@demo"} {
		if !strings.Contains(s, want) {
			t.Errorf("merged file lacks %q:\n%s", want, s)
		}
	}
	if strings.Index(s, "z3k") > strings.Index(s, "name: demo") {
		t.Errorf("existing entries no longer come first:\n%s", s)
	}
	k := read(t, p)
	if len(k.Contexts) != 1 || k.server("demo") != "https://10.0.1.100:6443" || k.user("admin@z3k")["token"] != "z3k-token" {
		t.Errorf("merged = %+v", k)
	}
}
