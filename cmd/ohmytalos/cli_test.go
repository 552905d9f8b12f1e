package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestEveryCommandHasHelp(t *testing.T) {
	for _, c := range newRootCmd().Commands() {
		if c.Short == "" {
			t.Errorf("%s has no short help", c.Name())
		}
		out, err := run(t, c.Name(), "--help")
		if err != nil || !strings.Contains(out, "Usage:") {
			t.Errorf("%s --help: %v", c.Name(), err)
		}
	}
}

func TestCostOffline(t *testing.T) {
	dir := seedDir(t)
	out, err := run(t, "cost", "--config", filepath.Join(dir, "ohmytalos.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	mustContain(t, "cost output", out, "TOTAL (EUR)", "offline prices as of", "cpx22 server", "lb11 load balancer", "bills by the hour")
}

func TestInitNeedsATerminal(t *testing.T) {
	dir := seedDir(t)
	_, err := run(t, "init", "--config", filepath.Join(dir, "ohmytalos.yaml"))
	if err == nil || !strings.Contains(err.Error(), "plan") || !strings.Contains(err.Error(), "apply") {
		t.Errorf("init without a terminal: %v", err)
	}
}

func TestSchematicID(t *testing.T) {
	out, err := run(t, "schematic", "id", tempFile(t, "empty.yaml", "customization: {}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if strings.TrimSpace(out) != "376567988ad370138ad8b2698212367b8edcb69b5fd68c80be1f2ec7d603b4ba" {
		t.Errorf("id = %q", out)
	}
}

func TestBadSpecNamesFieldAndFix(t *testing.T) {
	p := tempFile(t, "ohmytalos.yaml", "name: demo\ncontrolPlane: {count: 2, serverTyp: cpx22}\n")
	_, err := run(t, "plan", "--config", p)
	if err == nil {
		t.Fatal("bad spec accepted")
	}
	if !strings.Contains(err.Error(), "controlPlane.serverTyp") || !strings.Contains(err.Error(), "did you mean") {
		t.Errorf("err = %v", err)
	}
}

// TestSandboxApplyThenClientConfigs runs the whole apply in-process against
// the sandbox, then the commands that read what it stored.
func TestSandboxApplyThenClientConfigs(t *testing.T) {
	dir, cfg := seedConfig(t)
	out, err := run(t, "apply", "--sandbox", "--config", cfg)
	if err != nil {
		t.Fatalf("apply: %v\n%s", err, out)
	}
	if !strings.Contains(out, "SANDBOX") || !strings.Contains(out, "etcd bootstrapped") {
		t.Errorf("apply output:\n%s", out)
	}
	sandboxState := filepath.Join(dir, ".ohmytalos", ".sandbox", "demo")
	if _, err := os.Stat(filepath.Join(sandboxState, "state.json")); err != nil {
		t.Errorf("sandbox state not kept apart: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, ".ohmytalos", "demo")); err == nil {
		t.Error("a sandboxed run wrote the real cluster's state")
	}
	kc := filepath.Join(dir, "kubeconfig")
	if _, err := run(t, "kubeconfig", "--config", cfg, "--state-dir", sandboxState, "--out", kc); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(kc)
	if !strings.Contains(string(b), "client-key-data") {
		t.Error("kubeconfig not written")
	}
	fi, _ := os.Stat(kc)
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("kubeconfig mode %v", fi.Mode().Perm())
	}
	out, err = run(t, "talosconfig", "--config", cfg, "--state-dir", sandboxState)
	if err != nil || !strings.Contains(out, "contexts:") {
		t.Errorf("talosconfig: %v", err)
	}
}

func TestTalosConfigRedacted(t *testing.T) {
	dir, cfg := hetznerSeed(t)
	outDir := filepath.Join(dir, "configs")
	if out, err := run(t, "talos-config", "--config", cfg, "--out", outDir, "--redact"); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	for _, n := range []string{"controlplane.yaml", "worker.yaml"} {
		b, err := os.ReadFile(filepath.Join(outDir, n))
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(b), strings.Repeat("s", 64)) {
			t.Errorf("%s holds the Hetzner token", n)
		}
		if !strings.Contains(string(b), "REDACTED") {
			t.Errorf("%s not redacted", n)
		}
		fi, _ := os.Stat(filepath.Join(outDir, n))
		if fi.Mode().Perm() != 0o600 {
			t.Errorf("%s mode %v", n, fi.Mode().Perm())
		}
	}
	for n, want := range map[string]string{"hcloud-secret.yaml": "REDACTED", "cilium.yaml": "kind: DaemonSet",
		"hcloud-ccm.yaml": "hcloud-cloud-controller-manager", "hcloud-csi.yaml": "csi.hetzner.cloud"} {
		b, err := os.ReadFile(filepath.Join(outDir, "manifests", n))
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(b), want) || strings.Contains(string(b), strings.Repeat("s", 64)) {
			t.Errorf("manifests/%s lacks %q or holds the token", n, want)
		}
	}
	// Per release, its merged values beside the chart's manifest.
	for n, want := range map[string]string{"cilium.yaml": "k8sServicePort: 7445", "hcloud-ccm.yaml": "name: hcloud"} {
		b, err := os.ReadFile(filepath.Join(outDir, "values", n))
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(b), want) || strings.Contains(string(b), strings.Repeat("s", 64)) {
			t.Errorf("values/%s lacks %q or holds the token:\n%s", n, want, b)
		}
	}
}

func TestVersionListsAddons(t *testing.T) {
	out, err := run(t, "version")
	if err != nil {
		t.Fatal(err)
	}
	mustContain(t, "version", out, "add-on cilium v", "add-on hcloudCCM v", "add-on hcloudCSI v", "add-on longhorn v", "add-on metricsServer v")
}

func TestPlanAndCostCreateNoKey(t *testing.T) {
	ipEcho(t)
	dir, cfg := seedConfig(t)
	out, err := run(t, "plan", "--config", cfg)
	if err != nil {
		t.Fatalf("plan: %v\n%s", err, out)
	}
	mustContain(t, "plan", out, "1. Secrets", "7. Bootstrap", "cost:", "create  server         demo-cp-1", "203.0.113.7/32 (your address")
	if _, err := run(t, "cost", "--config", cfg); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "age.key")); err == nil {
		t.Error("plan or cost created an age identity they never use")
	}
}

// A chart mirror's charts are checked against its own index, not the
// pinned digests: a remote one is refused, naming the variable and the fix.
func TestRemoteChartMirrorRefused(t *testing.T) {
	dir := seedDir(t)
	hetznerFor(t, strings.Repeat("s", 64))
	t.Setenv("OHMYTALOS_CHART_MIRROR", "https://charts.example.com")
	cfg := filepath.Join(dir, "ohmytalos.yaml")
	out, err := run(t, "talos-config", "--config", cfg, "--out", filepath.Join(dir, "configs"), "--redact")
	if err == nil {
		t.Fatalf("a remote chart mirror was honoured:\n%s", out)
	}
	mustContain(t, "error", err.Error(), "OHMYTALOS_CHART_MIRROR=https://charts.example.com", "loopback", "unset OHMYTALOS_CHART_MIRROR")
}

// mustContain fails t for each of wants that text lacks, naming what.
func mustContain(t *testing.T, what, text string, wants ...string) {
	t.Helper()
	for _, w := range wants {
		if !strings.Contains(text, w) {
			t.Errorf("%s lacks %q:\n%s", what, w, text)
		}
	}
}
