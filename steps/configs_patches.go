package steps

import (
	"context"
	"maps"
	"slices"

	"github.com/siderolabs/talos/pkg/machinery/config/generate/secrets"

	"github.com/ohmytalos/ohmytalos/internal/engine"
	"github.com/ohmytalos/ohmytalos/internal/spec"
	"github.com/ohmytalos/ohmytalos/internal/talos"
)

// planPlaceholder stands in, at plan time, for secret values the patches
// cannot depend on (the Hetzner token, the Tailscale key, a passphrase not
// created yet): plan never looks secrets up.
const planPlaceholder = "plan-placeholder-secret-value"

// planLBAddress is the API load balancer's address at plan time when it
// does not exist yet (TEST-NET-1, RFC 5737).
const planLBAddress = "192.0.2.10"

// hasPatches reports whether the spec carries any machine-config patch.
func hasPatches(sp *spec.Spec) bool {
	if len(sp.Talos.Patches) > 0 || len(sp.ControlPlane.Patches) > 0 {
		return true
	}
	for _, p := range sp.Pools {
		if len(p.Patches) > 0 {
			return true
		}
	}
	return false
}

// planPatches renders every group with its patches when the spec has any,
// so that a patch that does not apply or validate fails at plan, before
// anything changes, and a patch that changes what ohmytalos depends on is
// named in the plan's notes.
func (s *Configs) planPatches(ctx context.Context, env *engine.Env, p *engine.Plan) error {
	if !hasPatches(env.Spec) {
		return nil
	}
	rendered, err := s.d.planRender(ctx, env)
	if err != nil {
		return err
	}
	for _, pool := range slices.Sorted(maps.Keys(rendered)) {
		for _, w := range rendered[pool].PatchWarnings {
			p.Notes = append(p.Notes, "warning: "+pool+": "+w)
		}
	}
	return nil
}

// planRender renders every group as apply would, but with the stored
// bundle (a throwaway one before the first apply) and placeholders for
// secret values, which no setting a patch changes depends on.
func (d *Deps) planRender(ctx context.Context, env *engine.Env) (map[string]talos.Rendered, error) {
	var b *secrets.Bundle
	var err error
	if env.State.HasSecret(secretBundle) {
		b, err = bundle(env)
	} else {
		var raw []byte
		if raw, err = talos.NewBundle(env.Spec.Talos.Version); err == nil {
			b, err = talos.LoadBundle(raw)
		}
	}
	if err != nil {
		return nil, err
	}
	c, err := d.planClusterInput(ctx, env)
	if err != nil {
		return nil, err
	}
	return d.renderWith(b, c, env)
}

// planClusterInput is clusterInput without secret look-ups.
func (d *Deps) planClusterInput(ctx context.Context, env *engine.Env) (talos.Cluster, error) {
	in := clusterSecrets{token: planPlaceholder, disk: planPlaceholder, tailscale: planPlaceholder}
	if env.State.HasSecret(secretDisk) {
		v, err := env.State.Secret(secretDisk)
		if err != nil {
			return talos.Cluster{}, err
		}
		in.disk = string(v)
	}
	return d.buildClusterInput(ctx, env, in, true)
}

// hasResource reports whether the state records a resource under key.
func hasResource(env *engine.Env, key string) bool {
	_, ok := env.State.Resource(key)
	return ok
}
