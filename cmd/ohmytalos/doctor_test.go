package main

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hetznercloud/hcloud-go/v2/hcloud"

	"github.com/ohmytalos/ohmytalos/internal/doctor"
	"github.com/ohmytalos/ohmytalos/internal/sandbox"
)

// noSpecDir is a folder without ohmytalos.yaml and an environment without
// cluster configs, so nothing leaks in from the machine running the test.
func noSpecDir(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	t.Chdir(dir)
	for _, v := range []string{"KUBECONFIG", "TALOSCONFIG", "HCLOUD_TOKEN", "HCLOUD_ENDPOINT"} {
		t.Setenv(v, "")
	}
	t.Setenv("HOME", dir)
	return dir
}

func doctorJSON(t *testing.T, args ...string) (doctor.JSONReport, error) {
	t.Helper()
	out, err := run(t, append([]string{"doctor", "--json"}, args...)...)
	var rep doctor.JSONReport
	if jerr := json.Unmarshal([]byte(out), &rep); jerr != nil {
		t.Fatalf("doctor --json %v: %v (%v)\n%s", args, jerr, err, out)
	}
	return rep, err
}

func check(rep doctor.JSONReport, id string) doctor.JSONResult {
	for _, c := range rep.Checks {
		if c.ID == id {
			return c
		}
	}
	return doctor.JSONResult{}
}

func TestDoctorWithoutASpecSkipsWithReasons(t *testing.T) {
	dir := noSpecDir(t)
	rep, err := doctorJSON(t, "--check", "etcd,lb-targets,provider-id,dns-ipv6", "--kubeconfig", filepath.Join(dir, "missing"))
	if err != nil {
		t.Fatalf("doctor without a spec: %v", err)
	}
	if len(rep.Checks) != 4 {
		t.Fatalf("checks = %+v, want the 4 of --check", rep.Checks)
	}
	want := map[string]string{
		"etcd":        "no spec",
		"lb-targets":  "no Hetzner token",
		"provider-id": "no kubeconfig",
		"dns-ipv6":    "no domains",
	}
	for id, reason := range want {
		c := check(rep, id)
		if c.Status != doctor.StatusSkip || !strings.Contains(c.Explanation, reason) {
			t.Errorf("%s = %s %q, want skip with %q", id, c.Status, c.Explanation, reason)
		}
	}
	notes := strings.Join(rep.Notes, "\n")
	for _, n := range []string{"no spec", "kubeconfig " + filepath.Join(dir, "missing"), "HCLOUD_TOKEN is not set"} {
		if !strings.Contains(notes, n) {
			t.Errorf("notes lack %q:\n%s", n, notes)
		}
	}
}

func TestDoctorWithoutASpecReadsHetznerFromTheEnvironment(t *testing.T) {
	noSpecDir(t)
	ctx := context.Background()
	sb, err := sandbox.Start(ctx, sandbox.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer sb.Close()
	t.Setenv("HCLOUD_ENDPOINT", sb.HCloudURL)
	t.Setenv("HCLOUD_TOKEN", sb.Token)
	c := hcloud.NewClient(hcloud.WithEndpoint(sb.HCloudURL), hcloud.WithToken(sb.Token))
	_, _, err = c.LoadBalancer.Create(ctx, hcloud.LoadBalancerCreateOpts{
		Name: "z3k-ingress", LoadBalancerType: &hcloud.LoadBalancerType{Name: "lb11"},
		Location: &hcloud.Location{Name: "nbg1"}, Labels: map[string]string{"ohmytalos.io/cluster": "z3k"},
	})
	if err != nil {
		t.Fatal(err)
	}

	rep, err := doctorJSON(t, "--check", "lb-targets")
	if err != nil || check(rep, "lb-targets").Status != doctor.StatusSkip || !strings.Contains(check(rep, "lb-targets").Explanation, "--cluster") {
		t.Errorf("without --cluster: %v %+v", err, rep.Checks)
	}

	rep, err = doctorJSON(t, "--check", "lb-targets", "--cluster", "z3k")
	var ee *exitError
	if !errors.As(err, &ee) || ee.code != 1 {
		t.Errorf("exit = %v, want 1 for a load balancer without targets", err)
	}
	lb := check(rep, "lb-targets")
	if lb.Status != doctor.StatusFail || !strings.Contains(strings.Join(lb.Evidence, " "), "z3k-ingress") {
		t.Errorf("lb-targets = %+v", lb)
	}
	b, _ := json.Marshal(rep)
	if strings.Contains(string(b), sb.Token) {
		t.Error("the token appears in the report")
	}
}

// z3kKubeconfig is a kubeconfig of cluster z3k on a port nothing listens
// on, ending in its contexts list (a test appends a context or the
// current-context).
const z3kKubeconfig = `apiVersion: v1
kind: Config
clusters:
- name: z3k
  cluster: {server: "https://127.0.0.1:1", insecure-skip-tls-verify: true}
users:
- name: admin@z3k
  user: {token: kube-token}
contexts:
- name: admin@z3k
  context: {cluster: z3k, user: admin@z3k}
`

// providerIDFrom runs doctor --check provider-id without a spec: its
// notes must name the kubeconfig source note, and the check must have run
// against that kubeconfig's API (nothing listens there, so it errs).
func providerIDFrom(t *testing.T, note string) {
	t.Helper()
	rep, _ := doctorJSON(t, "--check", "provider-id")
	if !strings.Contains(strings.Join(rep.Notes, "\n"), note) {
		t.Errorf("notes = %v, want %q", rep.Notes, note)
	}
	if c := check(rep, "provider-id"); c.Status != doctor.StatusError {
		t.Errorf("provider-id = %+v, want an error reaching the API of %s", c, note)
	}
}

func TestDoctorWithoutASpecReadsKUBECONFIG(t *testing.T) {
	dir := noSpecDir(t)
	kc := filepath.Join(dir, "kubeconfig")
	os.WriteFile(kc, []byte(z3kKubeconfig+"current-context: admin@z3k\n"), 0o600)
	t.Setenv("KUBECONFIG", kc)
	providerIDFrom(t, "Kubernetes: "+kc+" ($KUBECONFIG)")
}

// A $KUBECONFIG list is merged as kubectl merges it (the first file names
// the current context, the second defines it), and --context picks
// another context.
func TestDoctorWithoutASpecMergesKUBECONFIGList(t *testing.T) {
	dir := noSpecDir(t)
	a, b := filepath.Join(dir, "a"), filepath.Join(dir, "b")
	os.WriteFile(a, []byte("apiVersion: v1\nkind: Config\ncurrent-context: admin@z3k\n"), 0o600)
	os.WriteFile(b, []byte(z3kKubeconfig+"- name: other\n  context: {cluster: z3k, user: admin@z3k}\n"), 0o600)
	list := a + string(os.PathListSeparator) + b
	t.Setenv("KUBECONFIG", list)
	providerIDFrom(t, "Kubernetes: "+list+" ($KUBECONFIG), its current context")
	rep, _ := doctorJSON(t, "--check", "provider-id", "--context", "other")
	if !strings.Contains(strings.Join(rep.Notes, "\n"), "($KUBECONFIG), context other") {
		t.Errorf("notes with --context = %v", rep.Notes)
	}
	rep, _ = doctorJSON(t, "--check", "provider-id", "--context", "nope")
	if !strings.Contains(strings.Join(rep.Notes, "\n"), `no context "nope"`) {
		t.Errorf("notes with an unknown --context = %v", rep.Notes)
	}
}
