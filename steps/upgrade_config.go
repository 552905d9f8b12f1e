package steps

import (
	"context"
	"fmt"
	"slices"

	"golang.org/x/sync/errgroup"

	"github.com/ohmytalos/ohmytalos/internal/engine"
	"github.com/ohmytalos/ohmytalos/internal/spec"
	"github.com/ohmytalos/ohmytalos/internal/talos"
)

// configs brings each node whose recorded patches differ from the spec's
// to its newly rendered config: control planes one at a time, then
// workers in batches of upgrade.workerBatch, as Talos upgrades go.
func (r *upgradeRun) configs(ctx context.Context) error {
	nodes, _, cur, err := patchedNodes(r.env)
	if err != nil || len(nodes) == 0 {
		return err
	}
	rendered, err := r.s.configs.renderAll(ctx, r.env)
	if err != nil {
		return err
	}
	want := map[string]bool{}
	for _, n := range nodes {
		want[n.Name] = true
	}
	var cps, workers []nodeAddr
	for _, n := range r.nodes {
		switch {
		case !want[n.node.Name]:
		case n.node.Role == spec.RoleControlPlane:
			cps = append(cps, n)
		default:
			workers = append(workers, n)
		}
	}
	apply := func(ctx context.Context, n nodeAddr) error {
		return r.configNode(ctx, n, rendered[n.node.Pool].Config, cur[n.node.Pool])
	}
	for _, n := range cps {
		if err := apply(ctx, n); err != nil {
			return err
		}
	}
	for batch := range slices.Chunk(workers, r.env.Spec.Upgrade.Batch()) {
		g, gctx := errgroup.WithContext(ctx)
		for _, n := range batch {
			g.Go(func() error { return apply(gctx, n) })
		}
		if err := g.Wait(); err != nil {
			return err
		}
	}
	return nil
}

// configNode applies one node's new config. Talos is asked first, with
// an AUTO dry run, whether the change applies live: in Talos v1.13 only
// the v1alpha1 document's fields outside CanApplyImmediate's list (for
// example machine.env, machine.files, machine.disks) need a reboot, and
// other documents always apply live (machined v1alpha1_runtime.go). A live
// change is applied with NO_REBOOT; any other is STAGED, then the node is
// drained, rebooted and held to the upgrade's health gates before the next.
func (r *upgradeRun) configNode(ctx context.Context, n nodeAddr, cfg []byte, ps []talos.Patch) error {
	name, c := n.node.Name, r.conns[n.node.Name]
	reboot, why, err := c.NeedsReboot(ctx, cfg)
	if err != nil {
		return fmt.Errorf("node %s (%s): check its new machine config: %w; fix the patch and run apply again", name, n.ip, err)
	}
	wasReady, _, err := r.nodeReady(ctx, name)
	if err != nil {
		return fmt.Errorf("read node %s from Kubernetes before changing its config: %w", name, err)
	}
	if !reboot {
		r.emit(engine.Event{Kind: engine.KindProgress, Resource: "node/" + name, Message: "applying the patched machine config to " + name + " without a reboot"})
		err = c.ApplyConfigNoReboot(ctx, cfg)
		if err == nil && wasReady {
			err = r.waitUntil(ctx, name+" Ready after its config change", func(ctx context.Context) (bool, string, error) {
				ok, _, err := r.nodeReady(ctx, name)
				return ok, "NotReady", err
			})
		}
	} else {
		err = r.stageAndReboot(ctx, n, cfg, wasReady, why)
	}
	if err != nil {
		return fmt.Errorf("config change of node %s (%s) failed: %w; nodes after it were not touched: fix the node or the patch and run apply again", name, n.ip, err)
	}
	mode := "applied live"
	if reboot {
		mode = "staged, rebooted, Ready"
	}
	r.emit(engine.Event{Kind: engine.KindResource, Action: engine.ActionUpdate, Resource: "node/" + name, Message: "machine config " + mode})
	return r.s.configs.recordApplied(r.env, name, ps)
}

// stageAndReboot stages cfg, drains and reboots the node, then waits for
// the upgrade's gates (Ready, a healthy etcd for control planes; the
// drained node is uncordoned).
func (r *upgradeRun) stageAndReboot(ctx context.Context, n nodeAddr, cfg []byte, wasReady bool, why string) error {
	name, c := n.node.Name, r.conns[n.node.Name]
	if err := r.record(name, func(v *nodeVersions) { v.Pending, v.WaitReady = "config", wasReady }); err != nil {
		return err
	}
	r.emit(engine.Event{Kind: engine.KindProgress, Resource: "node/" + name, Message: "staging the patched machine config on " + name + ": Talos needs a reboot for it (" + firstLine(why) + ")"})
	if err := c.ApplyConfigStaged(ctx, cfg); err != nil {
		return err
	}
	if wasReady {
		if err := drainNode(ctx, r.kube, name, r.s.d.nodeTimeout(), r.s.d.poll(), r.emit); err != nil {
			return err
		}
		if err := r.record(name, func(v *nodeVersions) { v.Drained = true }); err != nil {
			return err
		}
	}
	if err := c.Reboot(ctx); err != nil {
		return err
	}
	// The node runs the staged config once it booted with it: its
	// MachineConfig resource then matches.
	if err := r.waitUntil(ctx, name+" booted with its new config", func(ctx context.Context) (bool, string, error) {
		active, err := c.MachineConfig(ctx)
		if err != nil {
			return false, "", err
		}
		diff, err := talos.DiffConfigs(active, cfg)
		if err != nil {
			return false, "", err
		}
		return len(diff) == 0, fmt.Sprintf("%d settings still differ", len(diff)), nil
	}); err != nil {
		return err
	}
	if err := r.talosGates(ctx, n, r.want[name], wasReady); err != nil {
		return err
	}
	return r.record(name, func(v *nodeVersions) { v.Pending, v.WaitReady = "", false })
}

// firstLine is a message's first line.
func firstLine(s string) string {
	for i, ch := range s {
		if ch == '\n' {
			return s[:i]
		}
	}
	return s
}

// recordedConfigs returns, per node, its config rendered from today's
// inputs with the patches it runs (the spec's when they did not change).
func (r *upgradeRun) recordedConfigs(ctx context.Context, rendered map[string]talos.Rendered) (func(nodeAddr) []byte, error) {
	nodes, rec, _, err := patchedNodes(r.env)
	if err != nil {
		return nil, err
	}
	own := map[string][]byte{}
	if len(nodes) > 0 {
		b, err := bundle(r.env)
		if err != nil {
			return nil, err
		}
		c, err := r.s.d.clusterInput(ctx, r.env)
		if err != nil {
			return nil, err
		}
		for _, n := range nodes {
			out, err := r.s.d.renderGroup(b, c, r.env, n.Pool, rec.Nodes[n.Name])
			if err != nil {
				return nil, fmt.Errorf("node %s: render its config with the patches it runs: %w", n.Name, err)
			}
			own[n.Name] = out.Config
		}
	}
	return func(n nodeAddr) []byte {
		if cfg, ok := own[n.node.Name]; ok {
			return cfg
		}
		return rendered[n.node.Pool].Config
	}, nil
}
