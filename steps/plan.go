package steps

import (
	"context"

	"github.com/hetznercloud/hcloud-go/v2/hcloud"

	"github.com/ohmytalos/ohmytalos/internal/engine"
)

// planClient returns the Hetzner client plan compares resources with.
// When the token cannot be looked up it returns nil and notes in p that
// the plan comes from the state alone.
func (d *Deps) planClient(ctx context.Context, env *engine.Env, p *engine.Plan) *hcloud.Client {
	c, err := d.PlanHCloud(ctx, env.Spec)
	if err != nil {
		p.Notes = append(p.Notes, "not compared with Hetzner ("+err.Error()+"): resources listed as reuse may still be updated by apply")
		return nil
	}
	return c
}

// stateAction is the plan action when Hetzner cannot be asked: create
// what the state does not know, reuse the rest.
func stateAction(env *engine.Env, key string) engine.Action {
	if _, ok := env.State.Resource(key); ok {
		return engine.ActionReuse
	}
	return engine.ActionCreate
}
