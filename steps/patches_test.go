package steps

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ohmytalos/ohmytalos/internal/engine"
	"github.com/ohmytalos/ohmytalos/internal/talos/talosapi"
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

// nodeConfigs reads every node's MachineConfig resource through the
// machinery client with the cluster's stored talosconfig.
func (w *world) nodeConfigs(t *testing.T, ctx context.Context) map[string]string {
	t.Helper()
	env := w.env(t)
	tc, err := env.State.Secret(secretTalosconfig)
	if err != nil {
		t.Fatal(err)
	}
	nodes, err := w.deps().addresses(ctx, env)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, n := range nodes {
		c, err := talosapi.Connect(ctx, tc, n.ip)
		if err != nil {
			t.Fatal(err)
		}
		cfg, err := c.MachineConfig(ctx)
		_ = c.Close()
		if err != nil {
			t.Fatalf("read the MachineConfig of %s: %v", n.node.Name, err)
		}
		out[n.node.Name] = string(cfg)
	}
	return out
}

func TestPatchReachesExactlyItsNodes(t *testing.T) {
	t.Setenv("HCLOUD_TOKEN", "sandbox-token")
	w := newWorld(t, patchSpec(t, `["@patches/cp.yaml"]`,
		`[{machine: {sysctls: {net.core.somaxconn: "65535"}}}, [{op: add, path: /machine/sysctls/vm.max_map_count, value: "262144"}]]`,
		map[string]string{"patches/cp.yaml": "machine:\n  sysctls:\n    kernel.pid_max: \"4194304\"\n"}))
	ctx := context.Background()
	if _, err := w.apply(t, ctx, nil); err != nil {
		t.Fatal(err)
	}
	cfgs := w.nodeConfigs(t, ctx)
	if len(cfgs) != 3 {
		t.Fatalf("nodes = %d, want 3", len(cfgs))
	}
	want := map[string]map[string]bool{
		"patched-cp-1":     {"time.cloudflare.com": true, "kernel.pid_max": true, "net.core.somaxconn": false, "vm.max_map_count": false},
		"patched-worker-1": {"time.cloudflare.com": true, "kernel.pid_max": false, "net.core.somaxconn": true, "vm.max_map_count": true},
		"patched-other-1":  {"time.cloudflare.com": true, "kernel.pid_max": false, "net.core.somaxconn": false, "vm.max_map_count": false},
	}
	for node, keys := range want {
		cfg, ok := cfgs[node]
		if !ok {
			t.Errorf("no node %s in %v", node, cfgs)
			continue
		}
		for key, has := range keys {
			if strings.Contains(cfg, key) != has {
				t.Errorf("%s: MachineConfig has %s = %v, want %v", node, key, !has, has)
			}
		}
	}
}
