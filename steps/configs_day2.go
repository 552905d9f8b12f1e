package steps

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/siderolabs/talos/pkg/machinery/config/generate/secrets"

	"github.com/ohmytalos/ohmytalos/internal/engine"
	"github.com/ohmytalos/ohmytalos/internal/spec"
	"github.com/ohmytalos/ohmytalos/internal/talos"
)

// secretAppliedPatches records, per node, the machine-config patches its
// running config was built with. It is a secret (age-encrypted): a patch
// may carry credentials, such as registry auth.
const secretAppliedPatches = "applied-patches"

// appliedPatches is what secretAppliedPatches holds. A node without an
// entry was built before patches existed: it carries none.
type appliedPatches struct {
	Nodes map[string][]talos.Patch `json:"nodes"`
}

// loadApplied reads the record of applied patches.
func loadApplied(env *engine.Env) (appliedPatches, error) {
	rec := appliedPatches{Nodes: map[string][]talos.Patch{}}
	if !env.State.HasSecret(secretAppliedPatches) {
		return rec, nil
	}
	b, err := env.State.Secret(secretAppliedPatches)
	if err != nil {
		return rec, err
	}
	if err := json.Unmarshal(b, &rec); err != nil {
		return rec, fmt.Errorf("read the record of applied machine-config patches: %w; remove %s to rebuild it from the spec", err, env.State.SecretPath(secretAppliedPatches))
	}
	if rec.Nodes == nil {
		rec.Nodes = map[string][]talos.Patch{}
	}
	return rec, nil
}

// recordApplied records that node runs a config built with ps (nil: the
// node is gone). Safe for concurrent use.
func (s *Configs) recordApplied(env *engine.Env, node string, ps []talos.Patch) error {
	s.recMu.Lock()
	defer s.recMu.Unlock()
	rec, err := loadApplied(env)
	if err != nil {
		return err
	}
	if ps == nil {
		if _, ok := rec.Nodes[node]; !ok {
			return nil
		}
		delete(rec.Nodes, node)
	} else {
		rec.Nodes[node] = ps
	}
	b, err := json.Marshal(rec)
	if err != nil {
		return err
	}
	return env.State.PutSecret(secretAppliedPatches, b)
}

// groupPatches lists each group's patches by pool name (never nil).
func groupPatches(sp *spec.Spec) (map[string][]talos.Patch, error) {
	gs, err := groups(sp)
	if err != nil {
		return nil, err
	}
	out := map[string][]talos.Patch{}
	for _, g := range gs {
		out[g.Pool] = append([]talos.Patch{}, g.Patches...)
	}
	return out, nil
}

// samePatches reports whether two patch lists are the same patches.
func samePatches(a, b []talos.Patch) bool {
	return slices.EqualFunc(a, b, func(x, y talos.Patch) bool { return x.Name == y.Name && bytes.Equal(x.Data, y.Data) })
}

// renderGroup renders one pool's config with the given patches.
func (d *Deps) renderGroup(b *secrets.Bundle, c talos.Cluster, env *engine.Env, pool string, ps []talos.Patch) (talos.Rendered, error) {
	gs, err := groups(env.Spec)
	if err != nil {
		return talos.Rendered{}, err
	}
	_, ids, err := imageNeeds(env.Spec)
	if err != nil {
		return talos.Rendered{}, err
	}
	for _, g := range gs {
		if g.Pool != pool {
			continue
		}
		name, _ := env.Spec.SchematicFor(g.Pool)
		g.Installer = d.installer(ids[name], env.Spec.Talos.Version)
		g.Patches = ps
		return talos.Render(b, c, g)
	}
	return talos.Rendered{}, fmt.Errorf("no node group %q in the spec", pool)
}

// patchedNodes are the spec's nodes whose server exists and whose
// recorded patches differ from the spec's, with both lists.
func patchedNodes(env *engine.Env) ([]spec.Node, appliedPatches, map[string][]talos.Patch, error) {
	rec, err := loadApplied(env)
	if err != nil {
		return nil, rec, nil, err
	}
	cur, err := groupPatches(env.Spec)
	if err != nil {
		return nil, rec, nil, err
	}
	var out []spec.Node
	for _, n := range env.Spec.Nodes() {
		if _, ok := env.State.Resource(serverKey(n.Name)); !ok {
			continue // created by the servers step with the spec's patches
		}
		if !samePatches(rec.Nodes[n.Name], cur[n.Pool]) {
			out = append(out, n)
		}
	}
	return out, rec, cur, nil
}

// configPlan is, per node whose patches changed, the config settings the
// change makes: the node's config rendered with its recorded patches
// against the one with the spec's, both from today's inputs, so only the
// patches' effect shows. A node whose config does not change is left out.
func (d *Deps) configPlan(ctx context.Context, env *engine.Env) (map[string][]engine.Change, error) {
	nodes, rec, cur, err := patchedNodes(env)
	if err != nil || len(nodes) == 0 {
		return nil, err
	}
	b, err := bundle(env)
	if err != nil {
		return nil, err
	}
	c, err := d.planClusterInput(ctx, env)
	if err != nil {
		return nil, err
	}
	out := map[string][]engine.Change{}
	for _, n := range nodes {
		old, err := d.renderGroup(b, c, env, n.Pool, rec.Nodes[n.Name])
		if err != nil {
			return nil, fmt.Errorf("node %s: render its config with the patches it runs: %w", n.Name, err)
		}
		next, err := d.renderGroup(b, c, env, n.Pool, cur[n.Pool])
		if err != nil {
			return nil, fmt.Errorf("node %s: %w", n.Name, err)
		}
		diff, err := talos.DiffConfigs(old.Config, next.Config)
		if err != nil {
			return nil, err
		}
		for _, p := range diff {
			out[n.Name] = append(out[n.Name], engine.Change{Field: "config " + p.Path, Old: p.Old, New: p.New})
		}
	}
	return out, nil
}
