package steps

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ohmytalos/ohmytalos/internal/engine"
)

// patchSpec is a small cluster with two pools; cp is controlPlane's
// patches, worker the worker pool's (YAML flow lists).
func patchSpec(t *testing.T, cp, worker string, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, body := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	body := `name: patched
talos:
  version: v1.13.9
  patches:
    - machine: {time: {servers: [time.cloudflare.com]}}
controlPlane: {serverType: cpx22, count: 1, patches: ` + cp + `}
pools:
  - {name: worker, serverType: cpx32, count: 1, patches: ` + worker + `}
  - {name: other, serverType: cpx32, count: 1}
secrets:
  hcloudToken: {provider: env, ref: HCLOUD_TOKEN}
`
	path := filepath.Join(dir, "ohmytalos.yaml")
	if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func (w *world) plan(t *testing.T) ([]engine.Plan, error) {
	t.Helper()
	return engine.New(All(w.deps())...).Plan(context.Background(), w.env(t))
}

func TestBadPatchFailsAtPlan(t *testing.T) {
	t.Setenv("HCLOUD_TOKEN", "sandbox-token")
	w := newWorld(t, patchSpec(t, "[]", `[[{op: remove, path: /machine/nosuch}]]`, nil))
	_, err := w.plan(t)
	if err == nil || !strings.Contains(err.Error(), "pools[0].patches[0]") || !strings.Contains(err.Error(), "JSON 6902") {
		t.Fatalf("plan error = %v, want it to name pools[0].patches[0] and why", err)
	}
	if n := len(w.sb.HCloud.Servers()); n != 0 {
		t.Errorf("%d servers exist after a failed plan", n)
	}
}

func TestCNIPatchWarnsAtPlan(t *testing.T) {
	t.Setenv("HCLOUD_TOKEN", "sandbox-token")
	w := newWorld(t, patchSpec(t, `["@patches/cni.yaml"]`, "[]", map[string]string{
		"patches/cni.yaml": "cluster:\n  network:\n    cni: {name: flannel}\n",
	}))
	plans, err := w.plan(t)
	if err != nil {
		t.Fatal(err)
	}
	var notes []string
	for _, p := range plans {
		if p.Step == engine.StepConfigs {
			notes = p.Notes
		}
	}
	found := false
	for _, n := range notes {
		found = found || (strings.Contains(n, "controlPlane.patches[0] (@patches/cni.yaml)") && strings.Contains(n, "cluster.network.cni.name"))
	}
	if !found {
		t.Errorf("configs notes = %q, want a warning naming the patch and cluster.network.cni.name", notes)
	}
}
