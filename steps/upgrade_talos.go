package steps

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"golang.org/x/sync/errgroup"

	"github.com/ohmytalos/ohmytalos/internal/engine"
	"github.com/ohmytalos/ohmytalos/internal/spec"
	"github.com/ohmytalos/ohmytalos/internal/talos/talosapi"
)

// checkTalosPath refuses a Talos change that skips a minor release. Talos
// supports upgrades and downgrades between neighbouring minors only: the
// 1.13 installer accepts hosts from 1.11.0 up to (not including) 1.15.0
// (machinery compatibility/talos113: MinimumHostUpgradeVersion,
// MaximumHostDowngradeVersion), and Sidero's upgrade guide asks for one
// minor at a time so that each release's migrations run. A patch change,
// either way, is always fine; so is one minor down.
func checkTalosPath(from, to string) error {
	if from == "" || from == to {
		return nil
	}
	f, t, err := parsePath(from, to,
		fmt.Errorf("the node runs Talos %q, which is no release version: upgrade it by hand with talosctl", from),
		fmt.Errorf("talos.version: %q is not a Talos release version: use the form \"v1.13.9\"", to))
	if err != nil {
		return err
	}
	if f.Major != t.Major {
		return fmt.Errorf("talos.version: %s -> %s changes the major release: Talos has no supported path for it", from, to)
	}
	step, lo, hi := 1, f.Minor, t.Minor
	if t.Minor < f.Minor {
		step, lo, hi = -1, t.Minor, f.Minor
	}
	if hi-lo <= 1 {
		return nil
	}
	var through []string
	for m := f.Minor + step; m != t.Minor; m += step {
		through = append(through, fmt.Sprintf("v%d.%d.x", f.Major, m))
	}
	dir := "upgrade"
	if step < 0 {
		dir = "downgrade"
	}
	return fmt.Errorf("talos.version: cannot %s from %s to %s in one step: Talos moves one minor release at a time; set talos.version to the latest patch of %s and apply, once each, then to %s",
		dir, from, to, strings.Join(through, ", then "), to)
}

// release is a Talos version's numbers.
type release struct{ Major, Minor, Patch int }

// parseRelease reads "v1.13.9" (a pre-release suffix is ignored).
func parseRelease(v string) (release, error) {
	var r release
	core, _, _ := strings.Cut(strings.TrimPrefix(v, "v"), "-")
	if _, err := fmt.Sscanf(core, "%d.%d.%d", &r.Major, &r.Minor, &r.Patch); err != nil || fmt.Sprintf("%d.%d.%d", r.Major, r.Minor, r.Patch) != core {
		return release{}, fmt.Errorf("%q is not a release version", v)
	}
	return r, nil
}

// parsePath parses both versions of a change from one release to
// another; badFrom or badTo is the error when that one is no release
// version.
func parsePath(from, to string, badFrom, badTo error) (f, t release, _ error) {
	f, err := parseRelease(from)
	if err != nil {
		return f, t, badFrom
	}
	if t, err = parseRelease(to); err != nil {
		return f, t, badTo
	}
	return f, t, nil
}

// talos upgrades every node that does not run the target release and
// schematic: control planes one at a time, then workers in batches.
func (r *upgradeRun) talos(ctx context.Context) error {
	var cps, workers []nodeAddr
	for _, n := range r.nodes {
		w, inst := r.want[n.node.Name], r.installed[n.node.Name]
		if err := checkTalosPath(inst.Version, w.Talos); err != nil {
			return fmt.Errorf("node %s: %w", n.node.Name, err)
		}
		if n.node.Role == spec.RoleControlPlane {
			cps = append(cps, n)
		} else {
			workers = append(workers, n)
		}
	}
	for _, n := range cps {
		if err := r.talosNode(ctx, n); err != nil {
			return err
		}
	}
	for batch := range slices.Chunk(workers, r.env.Spec.Upgrade.Batch()) {
		g, gctx := errgroup.WithContext(ctx)
		for _, n := range batch {
			g.Go(func() error { return r.talosNode(gctx, n) })
		}
		if err := g.Wait(); err != nil {
			return err
		}
	}
	return nil
}

// talosNode upgrades one node unless it already runs the target, then
// waits for it to pass the health gates and records it.
func (r *upgradeRun) talosNode(ctx context.Context, n nodeAddr) error {
	name, w := n.node.Name, r.want[n.node.Name]
	c := r.conns[name]
	r.mu.Lock()
	inst := r.installed[name]
	r.mu.Unlock()
	label := talosLabel(w.Talos, w.Schematic)
	if inst.Version == w.Talos && inst.Schematic == w.Schematic {
		rec := r.recorded(name)
		if rec.Talos == w.Talos && rec.Schematic == w.Schematic && rec.Pending == "" {
			return nil
		}
		if rec.Pending != "" {
			// Upgraded by a run that stopped before the health gates.
			if err := r.talosGates(ctx, n, w, rec.WaitReady); err != nil {
				return fmt.Errorf("node %s (%s) runs %s after an interrupted upgrade but is not healthy: %w; fix the node and run apply again", name, n.ip, label, err)
			}
		}
		r.emit(engine.Event{Kind: engine.KindResource, Action: engine.ActionReuse, Resource: "node/" + name, Message: "runs " + label})
		return r.record(name, func(v *nodeVersions) { v.Talos, v.Schematic, v.Pending, v.WaitReady = w.Talos, w.Schematic, "", false })
	}
	// The Image Factory serves installers per platform and schematic as
	// FACTORY/<platform>-installer/<schematic>:<version>
	// (siderolabs/image-factory README, "installer container images").
	image := r.s.d.installer(w.Schematic, w.Talos)
	// A node that was not Ready before (no CNI yet, say) is not expected
	// to be Ready after: the gate would only time out.
	wasReady, _, err := r.nodeReady(ctx, name)
	if err != nil {
		return fmt.Errorf("read node %s from Kubernetes before upgrading it: %w", name, err)
	}
	if !wasReady {
		r.emit(engine.Event{Kind: engine.KindWarning, Resource: "node/" + name,
			Message: name + " is not Ready in Kubernetes before its upgrade: the upgrade will not wait for it to be Ready"})
	}
	if err := r.record(name, func(v *nodeVersions) { v.Pending, v.WaitReady = "talos "+label, wasReady }); err != nil {
		return err
	}
	r.emit(engine.Event{Kind: engine.KindProgress, Resource: "node/" + name,
		Message: fmt.Sprintf("upgrading %s: %s -> %s (%s)", name, talosLabel(inst.Version, inst.Schematic), label, image)})
	err = c.Install(ctx, image, func(line string) {
		r.emit(engine.Event{Kind: engine.KindLog, Resource: "node/" + name, Message: line})
	})
	// The 1.13 lifecycle API leaves draining to the client (the legacy
	// Upgrade call drained inside machined): move the pods off before the
	// reboot, respecting PodDisruptionBudgets, as scaling down does.
	if err == nil && wasReady {
		if err = drainNode(ctx, r.kube, name, r.s.d.nodeTimeout(), r.s.d.poll(), r.emit); err == nil {
			err = r.record(name, func(v *nodeVersions) { v.Drained = true })
		}
	}
	if err == nil {
		err = c.Reboot(ctx)
	}
	if err == nil {
		err = r.talosGates(ctx, n, w, wasReady)
	}
	if err != nil {
		return fmt.Errorf("upgrade of node %s (%s) to %s failed: %w; the upgrade stopped there (nodes after it were not touched): fix the node and run apply again to retry it",
			name, n.ip, label, err)
	}
	r.mu.Lock()
	r.installed[name] = talosapi.Installed{Version: w.Talos, Schematic: w.Schematic}
	r.mu.Unlock()
	r.emit(engine.Event{Kind: engine.KindResource, Action: engine.ActionUpdate, Resource: "node/" + name,
		Message: fmt.Sprintf("talos: %s -> %s, Ready, same server", talosLabel(inst.Version, inst.Schematic), label)})
	return r.record(name, func(v *nodeVersions) { v.Talos, v.Schematic, v.Pending, v.WaitReady = w.Talos, w.Schematic, "", false })
}

// talosGates waits until the node answers at the new release and
// schematic, is Ready in Kubernetes, and (control planes) is back in a
// healthy etcd with every member.
func (r *upgradeRun) talosGates(ctx context.Context, n nodeAddr, w target, ready bool) error {
	c := r.conns[n.node.Name]
	label := talosLabel(w.Talos, w.Schematic)
	if err := r.waitUntil(ctx, n.node.Name+" at "+label, func(ctx context.Context) (bool, string, error) {
		got, err := c.Installed(ctx)
		return got.Version == w.Talos && got.Schematic == w.Schematic, "runs " + talosLabel(got.Version, got.Schematic), err
	}); err != nil {
		return err
	}
	if ready {
		if err := r.waitUntil(ctx, n.node.Name+" Ready in Kubernetes", func(ctx context.Context) (bool, string, error) {
			ok, _, err := r.nodeReady(ctx, n.node.Name)
			return ok, "NotReady", err
		}); err != nil {
			return err
		}
	}
	if n.node.Role == spec.RoleControlPlane {
		if err := r.waitUntil(ctx, n.node.Name+" in a healthy etcd", func(ctx context.Context) (bool, string, error) {
			return etcdHealthy(ctx, c, n.node.Name, r.env.Spec.ControlPlane.Count)
		}); err != nil {
			return err
		}
	}
	if !r.recorded(n.node.Name).Drained {
		return nil
	}
	if err := r.kube.Uncordon(ctx, n.node.Name); err != nil {
		return fmt.Errorf("uncordon node %s after its upgrade: %w", n.node.Name, err)
	}
	r.emit(engine.Event{Kind: engine.KindResource, Action: engine.ActionUpdate, Resource: "node/" + n.node.Name, Message: "uncordoned after its upgrade"})
	return r.record(n.node.Name, func(v *nodeVersions) { v.Drained = false })
}

// etcdHealthy asks the node's etcd for its members: an answer needs a
// quorum; every control plane must be a voting member, this node too.
func etcdHealthy(ctx context.Context, c *talosapi.Client, self string, want int) (bool, string, error) {
	members, err := c.EtcdMembers(ctx)
	if err != nil {
		return false, "", err
	}
	voters, found := 0, false
	for _, m := range members {
		if !m.Learner {
			voters++
		}
		found = found || (m.Name == self && !m.Learner)
	}
	return voters == want && found, fmt.Sprintf("%d of %d etcd members voting (this node: %v)", voters, want, found), nil
}
