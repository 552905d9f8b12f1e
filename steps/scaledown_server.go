package steps

import (
	"context"
	"fmt"

	"github.com/hetznercloud/hcloud-go/v2/hcloud"

	"github.com/ohmytalos/ohmytalos/internal/cloud"
	"github.com/ohmytalos/ohmytalos/internal/engine"
)

// deleteServer deletes the removed node's server (found by its stored ID)
// and waits for Hetzner to finish; a server already gone is fine. The load
// balancers target servers by label selector, so the target goes with it.
func (s *ScaleDown) deleteServer(ctx context.Context, env *engine.Env, r removal, emit engine.Emit) error {
	c, err := s.d.HCloud(ctx, env.Spec)
	if err != nil {
		return err
	}
	sv, _, err := c.Server.GetByID(ctx, r.ServerID)
	if err != nil {
		return fmt.Errorf("get server %s (%d): %w", r.Name, r.ServerID, err)
	}
	if sv != nil {
		var res hcloud.ServerDeleteResult
		err := s.d.whileLocked(ctx, func() error {
			got, _, err := c.Server.DeleteWithResult(ctx, sv)
			if got != nil {
				res = *got
			}
			return err
		})
		if err != nil && !cloud.IsNotFound(err) {
			return fmt.Errorf("delete server %s (%d): %w", r.Name, r.ServerID, err)
		}
		if res.Action != nil {
			if err := c.Action.WaitFor(ctx, res.Action); err != nil {
				return fmt.Errorf("delete server %s (%d): %w", r.Name, r.ServerID, err)
			}
		}
		emit(engine.Event{Kind: engine.KindResource, Action: engine.ActionDelete, Resource: "server/" + r.Name, ID: r.ServerID})
	}
	return env.State.DeleteResource(serverKey(r.Name))
}

// dropVolume deletes the removed server's volume, unless its pool keeps
// volumes: then the volume stays, recorded, for the pool's next server of
// that number. Hetzner detaches a volume when its server is deleted.
func (s *ScaleDown) dropVolume(ctx context.Context, env *engine.Env, r removal, emit engine.Emit) error {
	rec, ok := env.State.Resource(volumeKey(r.Name))
	if !ok {
		return nil
	}
	if keepsVolumes(env.Spec, r.Pool) {
		emit(engine.Event{Kind: engine.KindResource, Action: engine.ActionReuse, Resource: "volume/" + rec.Name, ID: rec.ID,
			Message: "kept: pool " + r.Pool + " keeps volumes (keepVolumes)"})
		return nil
	}
	c, err := s.d.HCloud(ctx, env.Spec)
	if err != nil {
		return err
	}
	v, _, err := c.Volume.GetByID(ctx, rec.ID)
	if err != nil {
		return fmt.Errorf("get volume %s (%d): %w", rec.Name, rec.ID, err)
	}
	if v != nil {
		if v.Server != nil {
			// Still attached: the server's delete has not detached it yet.
			a, _, err := c.Volume.Detach(ctx, v)
			if err == nil {
				err = c.Action.WaitFor(ctx, a)
			}
			if err != nil && !cloud.IsNotFound(err) {
				return fmt.Errorf("detach volume %s (%d): %w", rec.Name, rec.ID, err)
			}
		}
		err := s.d.whileLocked(ctx, func() error {
			_, err := c.Volume.Delete(ctx, v)
			return err
		})
		if err != nil && !cloud.IsNotFound(err) {
			return fmt.Errorf("delete volume %s (%d): %w", rec.Name, rec.ID, err)
		}
		emit(engine.Event{Kind: engine.KindResource, Action: engine.ActionDelete, Resource: "volume/" + rec.Name, ID: rec.ID})
	}
	return env.State.DeleteResource(volumeKey(r.Name))
}
