package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ohmytalos/ohmytalos/internal/sandbox"
)

// TestApplyWithTheTokenFromSandboxVaultwarden is the bw step as an operator
// tries it: "sandbox serve" (here started in the test) exports the bw serve
// URL and item, HCLOUD_TOKEN is unset, and a spec that reads the token from
// the vault applies.
func TestApplyWithTheTokenFromSandboxVaultwarden(t *testing.T) {
	dir := seedDir(t)
	sb, err := sandbox.Start(context.Background(), sandbox.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sb.Close() })
	var item, url string
	for _, kv := range sb.Env() {
		k, v, _ := strings.Cut(kv, "=")
		t.Setenv(k, v)
		switch k {
		case sandbox.BWItemEnv:
			item = v
		case sandbox.BWServeURLEnv:
			url = v
		}
	}
	if item == "" || url == "" {
		t.Fatalf("sandbox env %v lacks %s or %s", sb.Env(), sandbox.BWItemEnv, sandbox.BWServeURLEnv)
	}
	if err := os.Unsetenv("HCLOUD_TOKEN"); err != nil {
		t.Fatal(err)
	}
	cfg := filepath.Join(dir, "ohmytalos.yaml")
	b, err := os.ReadFile(cfg)
	if err != nil {
		t.Fatal(err)
	}
	spec := strings.Replace(string(b), "hcloudToken: {provider: env, ref: HCLOUD_TOKEN}",
		"hcloudToken: {provider: bw, ref: "+item+", serverURL: "+url+"}", 1)
	if spec == string(b) {
		t.Fatal("seed spec has no env hcloudToken line to replace")
	}
	if err := os.WriteFile(cfg, []byte(spec), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := run(t, "apply", "--config", cfg, "--state-dir", filepath.Join(dir, "state"))
	if err != nil {
		t.Fatalf("apply with the token from bw serve: %v\n%s", err, out)
	}
	if !strings.Contains(out, "bw:"+item) || strings.Contains(out, sb.Token) {
		t.Errorf("apply output does not name the bw reference, or shows the token:\n%s", out)
	}
	if len(sb.HCloud.Servers()) == 0 {
		t.Error("no servers in the sandbox after apply")
	}
}
