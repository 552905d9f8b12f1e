package steps

import (
	"context"
	"fmt"

	"github.com/hetznercloud/hcloud-go/v2/hcloud"

	"github.com/ohmytalos/ohmytalos/internal/cloud"
	"github.com/ohmytalos/ohmytalos/internal/engine"
	"github.com/ohmytalos/ohmytalos/internal/state"
)

// resourceOps finds or creates one kind of Hetzner resource.
type resourceOps[T any] struct {
	kind   string
	get    func(ctx context.Context, id int64) (T, error) // zero T when it no longer exists
	list   func(ctx context.Context, selector string) ([]T, error)
	create func(ctx context.Context) (T, error)
	id     func(T) int64
	name   func(T) string
	isNil  func(T) bool
}

// ensure returns the resource stored under key, else the one whose labels
// match selector, else a new one; it checkpoints the ID either way. Two
// matches is an error: ohmytalos never guesses.
func ensure[T any](ctx context.Context, env *engine.Env, emit engine.Emit, step, key, selector string, ops resourceOps[T]) (T, bool, error) {
	var zero T
	if r, ok := env.State.Resource(key); ok && r.ID != 0 {
		got, err := ops.get(ctx, r.ID)
		if err != nil {
			return zero, false, fmt.Errorf("get %s %d: %w", ops.kind, r.ID, err)
		}
		if !ops.isNil(got) {
			emit(engine.Event{Kind: engine.KindResource, Action: engine.ActionReuse, Resource: ops.kind + "/" + ops.name(got), ID: ops.id(got)})
			return got, false, nil
		}
	}
	list, err := ops.list(ctx, selector)
	if err != nil {
		return zero, false, fmt.Errorf("list %ss: %w", ops.kind, err)
	}
	got, found, err := cloud.One(list, ops.kind, selector, ops.name)
	if err != nil {
		return zero, false, err
	}
	created := false
	if !found {
		got, err = ops.create(ctx)
		if err != nil {
			// A create whose response was lost (and retried by hcloud-go)
			// made the resource: adopt it by its labels.
			adopted, ok := adoptAfterConflict(ctx, err, ops, selector)
			if !ok {
				return zero, false, err
			}
			got = adopted
		}
		created = true
	}
	if err := env.State.PutResource(key, state.Resource{Kind: ops.kind, ID: ops.id(got), Name: ops.name(got), Step: step}); err != nil {
		return zero, created, err
	}
	action := engine.ActionReuse
	if created {
		action = engine.ActionCreate
	}
	emit(engine.Event{Kind: engine.KindResource, Action: action, Resource: ops.kind + "/" + ops.name(got), ID: ops.id(got)})
	return got, created, nil
}

// adoptAfterConflict returns the one resource matching selector when err is
// a uniqueness error: the earlier attempt of a retried create succeeded.
func adoptAfterConflict[T any](ctx context.Context, err error, ops resourceOps[T], selector string) (T, bool) {
	var zero T
	if !hcloud.IsError(err, hcloud.ErrorCodeUniquenessError) {
		return zero, false
	}
	list, lerr := ops.list(ctx, selector)
	if lerr != nil {
		return zero, false
	}
	got, found, oerr := cloud.One(list, ops.kind, selector, ops.name)
	return got, found && oerr == nil
}
