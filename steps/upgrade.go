package steps

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/ohmytalos/ohmytalos/internal/engine"
	"github.com/ohmytalos/ohmytalos/internal/kube"
	"github.com/ohmytalos/ohmytalos/internal/spec"
	"github.com/ohmytalos/ohmytalos/internal/talos/talosapi"
)

// Upgrade brings running nodes to the spec's Talos release, schematic and
// Kubernetes version in place, on the same servers: Talos first (control
// planes one at a time, then workers in batches, each gated on its health),
// then Kubernetes (control-plane components, then kubelets node by node).
// Progress is recorded per node, so a killed or failed run resumes where
// it stopped and never upgrades a node twice.
type Upgrade struct {
	d       *Deps
	configs *Configs
}

// Name implements engine.Step.
func (s *Upgrade) Name() engine.StepName { return StepUpgrade }

// Title implements engine.Step.
func (s *Upgrade) Title() string { return "Upgrade: Talos and Kubernetes in place" }

// After implements engine.Dependent: nodes are upgraded once the cluster
// and its add-ons are up.
func (s *Upgrade) After() []engine.StepName {
	// Never alongside scale-down: a drain and a reboot must not race.
	return []engine.StepName{StepAddons, StepScaleDown}
}

const dataUpgrade = "upgrade"

// upgradeData is what the upgrade step records per node name.
type upgradeData struct {
	Nodes map[string]nodeVersions `json:"nodes"`
}

// forgetUpgradeRecord drops a removed node's entry from the upgrade record.
func forgetUpgradeRecord(env *engine.Env, node string) error {
	var data upgradeData
	found, err := env.State.GetData(dataUpgrade, &data)
	if err != nil || !found {
		return err
	}
	if _, ok := data.Nodes[node]; !ok {
		return nil
	}
	delete(data.Nodes, node)
	return env.State.PutData(dataUpgrade, data)
}

// nodeVersions is what a node was last seen running.
type nodeVersions struct {
	Talos     string `json:"talos,omitempty"`
	Schematic string `json:"schematic,omitempty"`
	// ControlPlane is the Kubernetes version of a control plane's
	// apiserver, controller-manager and scheduler.
	ControlPlane string `json:"controlPlane,omitempty"`
	Kubelet      string `json:"kubelet,omitempty"`
	// Pending is the upgrade under way when the run stopped ("" if none).
	Pending string `json:"pending,omitempty"`
	// WaitReady tells whether the pending upgrade waits for Ready (the
	// node was Ready before it).
	WaitReady bool `json:"waitReady,omitempty"`
	// Drained tells that the upgrade cordoned and drained the node: it is
	// uncordoned once it passed the health gates.
	Drained bool `json:"drained,omitempty"`
}

// target is what one node should run.
type target struct {
	Talos, Schematic, Kubernetes string
}

// targets computes every node's target from the spec.
func targets(sp *spec.Spec) (map[string]target, error) {
	ids, err := schematicIDs(sp)
	if err != nil {
		return nil, err
	}
	out := map[string]target{}
	for _, n := range sp.Nodes() {
		name, _ := sp.SchematicFor(n.Pool)
		out[n.Name] = target{Talos: sp.Talos.Version, Schematic: ids[name], Kubernetes: "v" + sp.Kubernetes.Version}
	}
	return out, nil
}

// talosLabel renders a release and schematic as plan and events show them.
func talosLabel(version, schematic string) string {
	if len(schematic) > 12 {
		schematic = schematic[:12] + "…"
	}
	if schematic == "" {
		schematic = "(none)"
	}
	return version + " / schematic " + schematic
}

// Plan implements engine.Step: it compares what each node was last seen
// running with the spec. A node never seen yet is read at apply.
func (s *Upgrade) Plan(ctx context.Context, env *engine.Env) (engine.Plan, error) {
	want, err := targets(env.Spec)
	if err != nil {
		return engine.Plan{}, err
	}
	var data upgradeData
	if _, err := env.State.GetData(dataUpgrade, &data); err != nil {
		return engine.Plan{}, err
	}
	cfgChanges, err := s.d.configPlan(ctx, env)
	if err != nil {
		return engine.Plan{}, err
	}
	p := engine.Plan{Notes: []string{
		"control planes are upgraded one at a time, each back at the new version, Ready and in a healthy etcd before the next; then workers in batches of " + fmt.Sprint(env.Spec.Upgrade.Batch()),
	}}
	for _, n := range env.Spec.Nodes() {
		w := want[n.Name]
		rec, ok := data.Nodes[n.Name]
		if !ok {
			it := engine.PlanItem{Action: engine.ActionReuse, Kind: "node", Name: n.Name, Detail: "versions are read from the node at apply"}
			p.Items = append(p.Items, withConfigChanges(it, cfgChanges[n.Name]))
			continue
		}
		if err := checkTalosPath(rec.Talos, w.Talos); err != nil {
			return engine.Plan{}, fmt.Errorf("node %s: %w", n.Name, err)
		}
		if err := checkKubernetesPath(rec.ControlPlane, w.Kubernetes); err != nil {
			return engine.Plan{}, fmt.Errorf("node %s: %w", n.Name, err)
		}
		var changes []engine.Change
		if rec.Talos != w.Talos || rec.Schematic != w.Schematic {
			changes = append(changes, engine.Change{Field: "talos", Old: talosLabel(rec.Talos, rec.Schematic), New: talosLabel(w.Talos, w.Schematic)})
		}
		if n.Role == spec.RoleControlPlane && rec.ControlPlane != "" && rec.ControlPlane != w.Kubernetes {
			changes = append(changes, engine.Change{Field: "kubernetes control plane", Old: rec.ControlPlane, New: w.Kubernetes})
		}
		if rec.Kubelet != w.Kubernetes {
			changes = append(changes, engine.Change{Field: "kubelet", Old: rec.Kubelet, New: w.Kubernetes})
		}
		it := engine.PlanItem{Action: engine.ActionReuse, Kind: "node", Name: n.Name, Detail: talosLabel(w.Talos, w.Schematic) + ", Kubernetes " + w.Kubernetes}
		if len(changes) > 0 {
			it.Action, it.Changes, it.Detail = engine.ActionUpdate, changes, "upgraded in place on the same server"
		}
		if rec.Pending != "" {
			it.Detail += "; interrupted during " + rec.Pending + ", resumed"
		}
		p.Items = append(p.Items, withConfigChanges(it, cfgChanges[n.Name]))
	}
	return p, nil
}

// upgradeRun is one apply of the upgrade step.
type upgradeRun struct {
	s     *Upgrade
	env   *engine.Env
	emit  engine.Emit
	kube  *kube.Client
	want  map[string]target
	nodes []nodeAddr
	conns map[string]*talosapi.Client

	mu   sync.Mutex
	data upgradeData
	// installed is what each node runs, read at the start and kept current.
	installed map[string]talosapi.Installed
}

// Apply implements engine.Step.
func (s *Upgrade) Apply(ctx context.Context, env *engine.Env, emit engine.Emit) error {
	want, err := targets(env.Spec)
	if err != nil {
		return err
	}
	tc, err := env.State.Secret(secretTalosconfig)
	if err != nil {
		return fmt.Errorf("no talosconfig stored yet (%w): run the bootstrap step first", err)
	}
	kc, err := s.d.Kube(ctx, env)
	if err != nil {
		return err
	}
	nodes, err := s.d.addresses(ctx, env)
	if err != nil {
		return err
	}
	r := &upgradeRun{s: s, env: env, emit: emit, kube: kc, want: want, nodes: nodes,
		conns: map[string]*talosapi.Client{}, installed: map[string]talosapi.Installed{}}
	defer r.close()
	if _, err := env.State.GetData(dataUpgrade, &r.data); err != nil {
		return err
	}
	if r.data.Nodes == nil {
		r.data.Nodes = map[string]nodeVersions{}
	}
	if err := r.connect(ctx, tc); err != nil {
		return err
	}
	if err := r.preflight(ctx); err != nil {
		return err
	}
	if err := r.talos(ctx); err != nil {
		return err
	}
	if err := r.kubernetes(ctx); err != nil {
		return err
	}
	return r.configs(ctx)
}

// withConfigChanges marks a node's plan item as a config update.
func withConfigChanges(it engine.PlanItem, changes []engine.Change) engine.PlanItem {
	if len(changes) == 0 {
		return it
	}
	if it.Action != engine.ActionUpdate {
		it.Detail = ""
	}
	it.Action = engine.ActionUpdate
	it.Changes = append(it.Changes, changes...)
	it.Detail = strings.TrimPrefix(it.Detail+"; machine-config patches applied live where Talos can, else staged and rebooted", "; ")
	return it
}

// connect opens a Talos API client per node and reads what it runs.
func (r *upgradeRun) connect(ctx context.Context, tc []byte) error {
	for _, n := range r.nodes {
		c, err := r.s.d.Talos(ctx, tc, n.ip)
		if err != nil {
			return fmt.Errorf("%s: %w", n.node.Name, err)
		}
		r.conns[n.node.Name] = c
		wctx, cancel := context.WithTimeout(ctx, r.s.d.nodeTimeout())
		err = r.s.d.waitTalos(wctx, c, n, r.emit)
		var inst talosapi.Installed
		if err == nil {
			inst, err = c.Installed(wctx)
		}
		cancel()
		if err != nil {
			return fmt.Errorf("read the versions of node %s (%s): %w%s", n.node.Name, n.ip, err, r.s.d.unreachableReason(ctx, r.env))
		}
		r.installed[n.node.Name] = inst
	}
	return nil
}

func (r *upgradeRun) close() {
	for _, c := range r.conns {
		_ = c.Close()
	}
}

// record updates a node's record and checkpoints it.
func (r *upgradeRun) record(node string, fn func(*nodeVersions)) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	v := r.data.Nodes[node]
	fn(&v)
	r.data.Nodes[node] = v
	return r.env.State.PutData(dataUpgrade, r.data)
}

// recorded returns a node's record.
func (r *upgradeRun) recorded(node string) nodeVersions {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.data.Nodes[node]
}

// waitUntil polls cond every poll interval until it holds, fails for
// good, or the node timeout passes; last describes what was seen.
func (r *upgradeRun) waitUntil(ctx context.Context, what string, cond func(context.Context) (bool, string, error)) error {
	ctx, cancel := context.WithTimeout(ctx, r.s.d.nodeTimeout())
	defer cancel()
	last := "no answer yet"
	for {
		cctx, ccancel := context.WithTimeout(ctx, 5*time.Second)
		ok, seen, err := cond(cctx)
		ccancel()
		switch {
		case err != nil && !talosapi.IsRetryable(err) && !kube.IsRetryable(err) && ctx.Err() == nil:
			return fmt.Errorf("wait for %s: %w", what, err)
		case err != nil:
			last = err.Error()
		case ok:
			return nil
		default:
			last = seen
		}
		if err := sleep(ctx, r.s.d.poll()); err != nil {
			return fmt.Errorf("wait for %s: gave up after %s (last seen: %s): %w", what, r.s.d.nodeTimeout(), last, err)
		}
	}
}

// nodeReady reads a Kubernetes node: Ready, and its kubelet version.
func (r *upgradeRun) nodeReady(ctx context.Context, name string) (bool, string, error) {
	o, err := r.kube.Get(ctx, "v1", "Node", "", name)
	if err != nil {
		return false, "", err
	}
	info := kube.Node(o)
	st, _ := o["status"].(map[string]any)
	ni, _ := st["nodeInfo"].(map[string]any)
	kv, _ := ni["kubeletVersion"].(string)
	return info.Ready, kv, nil
}

// preflight refuses, before any node is touched, a Kubernetes version the
// target Talos release does not run: Talos would be upgraded for nothing.
func (r *upgradeRun) preflight(ctx context.Context) error {
	sp := r.env.Spec
	for _, n := range r.nodes {
		_, kv, err := r.nodeReady(ctx, n.node.Name)
		if err != nil {
			return fmt.Errorf("read node %s from Kubernetes: %w", n.node.Name, err)
		}
		if kv != "v"+sp.Kubernetes.Version {
			return kubernetesSupported(sp.Kubernetes.Version, sp.Talos.Version)
		}
	}
	return nil
}
