package steps

import (
	"context"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ohmytalos/ohmytalos/internal/engine"
	"github.com/ohmytalos/ohmytalos/internal/spec"
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
	if n := len(w.SB.HCloud.Servers()); n != 0 {
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
		if p.Step == StepConfigs {
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
	tc := storedSecret(t, env, secretTalosconfig)
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

// reload points the world at a new spec file (same cluster, same state).
func (w *world) reload(t *testing.T, path string) {
	t.Helper()
	sp, err := spec.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	w.Spec = sp
}

// boots is how often each node booted, by node name.
func (w *world) boots(t *testing.T) map[string]int {
	t.Helper()
	env := w.env(t)
	out := map[string]int{}
	for _, n := range w.Spec.Nodes() {
		r, ok := env.State.Resource(serverKey(n.Name))
		if !ok {
			t.Fatalf("no server recorded for %s", n.Name)
		}
		tn := w.SB.Talos.Node(r.ID)
		if tn == nil {
			t.Fatalf("no Talos node for %s", n.Name)
		}
		out[n.Name] = tn.Boots()
	}
	return out
}

// upgradePlan is the upgrade step's items by node name.
func (w *world) upgradePlan(t *testing.T) map[string]engine.PlanItem {
	t.Helper()
	plans, err := w.plan(t)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]engine.PlanItem{}
	for _, p := range plans {
		if p.Step == StepUpgrade {
			for _, it := range p.Items {
				out[it.Name] = it
			}
		}
	}
	return out
}

func TestDay2PatchChange(t *testing.T) {
	t.Setenv("HCLOUD_TOKEN", "sandbox-token")
	w := newWorld(t, patchSpec(t, "[]", `[{machine: {sysctls: {net.core.somaxconn: "65535"}}}]`, nil))
	ctx := context.Background()
	if _, err := w.apply(t, ctx, nil); err != nil {
		t.Fatal(err)
	}
	for name, it := range w.upgradePlan(t) {
		if it.Action != engine.ActionReuse {
			t.Fatalf("right after the build, node %s plans %s %v", name, it.Action, it.Changes)
		}
	}
	before := w.boots(t)

	// A live change: a sysctl (machine.sysctls is in Talos' immediate list).
	w.reload(t, patchSpec(t, "[]", `[{machine: {sysctls: {net.core.somaxconn: "32768"}}}]`, nil))
	items := w.upgradePlan(t)
	for name, it := range items {
		want := engine.ActionReuse
		if name == "patched-worker-1" {
			want = engine.ActionUpdate
		}
		if it.Action != want {
			t.Errorf("node %s plans %s, want %s (%v)", name, it.Action, want, it.Changes)
		}
	}
	ch := items["patched-worker-1"].Changes
	if len(ch) != 1 || ch[0].Field != `config v1alpha1: machine.sysctls["net.core.somaxconn"]` || ch[0].Old != `"65535"` || ch[0].New != `"32768"` {
		t.Fatalf("worker changes = %+v, want only the sysctl 65535 -> 32768", ch)
	}
	var events []engine.Event
	if _, err := w.apply(t, ctx, func(ev engine.Event) { events = append(events, ev) }); err != nil {
		t.Fatal(err)
	}
	if !hasNodeEvent(events, "node/patched-worker-1", "machine config applied live") {
		t.Errorf("no live apply event for the worker")
	}
	if cfg := w.nodeConfigs(t, ctx)["patched-worker-1"]; !strings.Contains(cfg, `net.core.somaxconn: "32768"`) {
		t.Errorf("worker MachineConfig lacks the new sysctl")
	}
	if after := w.boots(t); !maps.Equal(after, before) {
		t.Errorf("boots %v -> %v: a live change rebooted a node", before, after)
	}
	for name, it := range w.upgradePlan(t) {
		if it.Action != engine.ActionReuse {
			t.Errorf("after the apply, node %s still plans %s %v", name, it.Action, it.Changes)
		}
	}

	// A change Talos applies only at boot: machine.env.
	w.reload(t, patchSpec(t, "[]", `[{machine: {sysctls: {net.core.somaxconn: "32768"}, env: {HTTPS_PROXY: "http://proxy.example:3128"}}}]`, nil))
	if ch := w.upgradePlan(t)["patched-worker-1"].Changes; len(ch) != 1 || ch[0].Field != "config v1alpha1: machine.env.HTTPS_PROXY" {
		t.Fatalf("worker changes = %+v, want machine.env.HTTPS_PROXY", ch)
	}
	events = nil
	if _, err := w.apply(t, ctx, func(ev engine.Event) { events = append(events, ev) }); err != nil {
		t.Fatal(err)
	}
	if !hasNodeEvent(events, "node/patched-worker-1", "machine config staged, rebooted, Ready") {
		t.Errorf("no staged+reboot event for the worker")
	}
	if cfg := w.nodeConfigs(t, ctx)["patched-worker-1"]; !strings.Contains(cfg, "HTTPS_PROXY") {
		t.Errorf("worker MachineConfig lacks machine.env after its reboot")
	}
	after := w.boots(t)
	for name, n := range after {
		want := before[name]
		if name == "patched-worker-1" {
			want++
		}
		if n != want {
			t.Errorf("node %s booted %d times, want %d", name, n, want)
		}
	}

	// A control plane's reboot-needing change goes through the etcd gate too.
	w.reload(t, patchSpec(t, `[{machine: {env: {GODEBUG: "netdns=go"}}}]`, `[{machine: {sysctls: {net.core.somaxconn: "32768"}, env: {HTTPS_PROXY: "http://proxy.example:3128"}}}]`, nil))
	for name, it := range w.upgradePlan(t) {
		if (it.Action == engine.ActionUpdate) != (name == "patched-cp-1") {
			t.Errorf("node %s plans %s %v; only the control plane changes", name, it.Action, it.Changes)
		}
	}
	events = nil
	if _, err := w.apply(t, ctx, func(ev engine.Event) { events = append(events, ev) }); err != nil {
		t.Fatal(err)
	}
	if !hasNodeEvent(events, "node/patched-cp-1", "machine config staged, rebooted, Ready") {
		t.Errorf("no staged+reboot event for the control plane")
	}
	if got := w.boots(t)["patched-cp-1"]; got != after["patched-cp-1"]+1 {
		t.Errorf("control plane booted %d times, want %d", got, after["patched-cp-1"]+1)
	}
}

func hasNodeEvent(events []engine.Event, resource, msg string) bool {
	for _, ev := range events {
		if ev.Resource == resource && strings.Contains(ev.Message, msg) {
			return true
		}
	}
	return false
}
