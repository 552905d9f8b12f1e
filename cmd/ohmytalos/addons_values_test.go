package main

import (
	"path/filepath"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

// TestAddonsValues prints ohmytalos's values of each add-on for the seed
// spec: YAML nested by the chart's keys, a why comment above each value,
// no secret, and an error naming the add-ons for an unknown NAME.
func TestAddonsValues(t *testing.T) {
	dir := seedDir(t)
	t.Setenv("HCLOUD_TOKEN", "token-that-must-not-print")
	cfg := filepath.Join(dir, "ohmytalos.yaml")
	out, err := run(t, "addons", "values", "hcloudCCM", "--config", cfg)
	if err != nil {
		t.Fatalf("addons values: %v\n%s", err, out)
	}
	var doc map[string]any
	if err := yaml.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatalf("not YAML: %v\n%s", err, out)
	}
	env, _ := doc["env"].(map[string]any)
	tok, _ := env["HCLOUD_TOKEN"].(map[string]any)
	if tok["valueFrom"] == nil || doc["networking"].(map[string]any)["enabled"] != true {
		t.Fatalf("values lack the token reference or networking:\n%s", out)
	}
	if !strings.Contains(out, "  # the API token, read from Secret kube-system/hcloud (never a value) (Talos on Hetzner needs it: overriding it gets a plan warning)\n  HCLOUD_TOKEN:\n") {
		t.Errorf("no why comment above env.HCLOUD_TOKEN:\n%s", out)
	}
	if strings.Contains(out, "token-that-must-not-print") {
		t.Error("the token was printed")
	}
	for _, name := range []string{"cilium", "hcloud-csi", "ingress"} {
		out, err := run(t, "addons", "values", name, "--config", cfg)
		if err != nil || !strings.Contains(out, "# ") {
			t.Errorf("addons values %s: %v\n%s", name, err, out)
		}
	}
	out, err = run(t, "addons", "values", "talos-backup", "--config", cfg)
	if err == nil || !strings.Contains(err.Error(), "use one of cilium") {
		t.Fatalf("want an error naming the add-ons, got %v\n%s", err, out)
	}
}
