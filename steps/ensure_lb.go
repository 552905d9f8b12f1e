package steps

import (
	"context"
	"fmt"

	"github.com/hetznercloud/hcloud-go/v2/hcloud"

	"github.com/ohmytalos/ohmytalos/internal/cloud"
	"github.com/ohmytalos/ohmytalos/internal/engine"
	"github.com/ohmytalos/ohmytalos/internal/state"
)

// The load balancer's reconcile still goes through resourceOps until it
// moves to its service's Find like the other kinds.

// resourceOps is how one kind of Hetzner resource is reconciled. Every
// kind (network, placement group, firewall, load balancer, server,
// volume) goes through the same shape, after cluster-api-provider-hetzner's
// findServer and reconcile functions (syself/cluster-api-provider-hetzner,
// pkg/services/hcloud/server/server.go): get by the stored ID, else list
// by labels (two matches is an error), else create (adopting after a lost
// create response), then compare with the spec and update in place what
// Hetzner can change, reporting what it cannot.
type resourceOps[T any] struct {
	kind string
	get  func(ctx context.Context, id int64) (T, error) // zero T when it no longer exists
	list func(ctx context.Context, selector string) ([]T, error)
	// relist asks Hetzner itself when list is served from an earlier
	// listing (see prefetched): after a create whose response was lost,
	// only a fresh list shows what it made. nil: list asks Hetzner.
	relist func(ctx context.Context, selector string) ([]T, error)
	// create makes the resource and returns the actions that make it
	// ready, for the caller to wait for (none when create waited).
	create func(ctx context.Context) (T, []*hcloud.Action, error)
	id     func(T) int64
	name   func(T) string
	isNil  func(T) bool
	// labels are the resource's labels: a match found by the name labels
	// is adopted only when its cluster ID is this state's.
	labels func(T) map[string]string
	// diff lists how a live resource differs from the spec; changes
	// marked Replace are those Hetzner cannot make in place. nil: none.
	diff func(T) []engine.Change
	// update makes the in-place changes (those not marked Replace) and
	// returns the resource as it now is. Required when diff can return
	// in-place changes.
	update func(ctx context.Context, got T, changes []engine.Change) (T, error)
	// detail describes a created resource in its event (optional).
	detail func(T) string
}

// find returns the resource stored under key, else the one whose labels
// match want's (without the cluster ID) and whose cluster ID is this
// state's; found is false when there is none. A match with the cluster's
// name but another or no ID is an error: another checkout owns it.
func find[T any](ctx context.Context, st *state.Store, key string, want map[string]string, ops resourceOps[T]) (T, bool, error) {
	var zero T
	if r, ok := st.Resource(key); ok && r.ID != 0 {
		got, err := ops.get(ctx, r.ID)
		if err != nil {
			return zero, false, fmt.Errorf("get %s %d: %w", ops.kind, r.ID, err)
		}
		if !ops.isNil(got) {
			return got, true, nil
		}
	}
	selector := cloud.Selector(cloud.WithoutClusterID(want))
	list, err := ops.list(ctx, selector)
	if err != nil {
		return zero, false, fmt.Errorf("list %ss: %w", ops.kind, err)
	}
	return oneOwned(st, list, selector, ops)
}

// oneOwned keeps the matches that carry this state's cluster ID: one is
// adopted, two is an error; none but others with the name is an error.
func oneOwned[T any](st *state.Store, list []T, selector string, ops resourceOps[T]) (T, bool, error) {
	var zero T
	var ours []T
	var foreign []string
	var foreignLabels map[string]string
	for _, it := range list {
		if ownedByID(st, ops.labels(it)) {
			ours = append(ours, it)
			continue
		}
		foreign = append(foreign, fmt.Sprintf("%s (%d)", ops.name(it), ops.id(it)))
		foreignLabels = ops.labels(it)
	}
	if len(ours) == 0 && len(foreign) > 0 {
		return zero, false, foreignError(st, ops.kind, foreign, foreignLabels)
	}
	return cloud.One(ours, ops.kind, selector, ops.name)
}

// ensure reconciles one resource: it finds it (find), else creates it,
// checkpoints its ID, then updates in place what differs from the spec.
// Changes Hetzner cannot make in place are reported as a warning and the
// resource is left as it is. The actions are a create's pending ones
// (none when the resource was found, or create waited for them).
func ensure[T any](ctx context.Context, env *engine.Env, emit engine.Emit, step engine.StepName, key string, want map[string]string, ops resourceOps[T]) (T, []*hcloud.Action, error) {
	var zero T
	got, found, err := find(ctx, env.State, key, want, ops)
	if err != nil {
		return zero, nil, err
	}
	var actions []*hcloud.Action
	if !found {
		got, actions, err = ops.create(ctx)
		if err != nil {
			// A create whose response was lost (and retried by hcloud-go)
			// made the resource: adopt it by its labels.
			adopted, ok := adoptAfterConflict(ctx, env.State, err, ops, want)
			if !ok {
				return zero, nil, limitHint(ops.kind, err)
			}
			got, actions = adopted, nil
		}
	}
	rec := state.Resource{Kind: ops.kind, ID: ops.id(got), Name: ops.name(got), Step: string(step)}
	if prev, ok := env.State.Resource(key); ok && prev.ID == rec.ID {
		rec.Attrs = prev.Attrs // such as a load balancer's pending create action
	}
	if err := env.State.PutResource(key, rec); err != nil {
		return zero, actions, err
	}
	res := ops.kind + "/" + ops.name(got)
	if !found {
		ev := engine.Event{Kind: engine.KindResource, Action: engine.ActionCreate, Resource: res, ID: ops.id(got)}
		if ops.detail != nil {
			ev.Message = ops.detail(got)
		}
		emit(ev)
		return got, actions, nil
	}
	got, err = updateFound(ctx, emit, res, got, ops)
	return got, nil, err
}

// updateFound compares a found resource with the spec and updates it.
func updateFound[T any](ctx context.Context, emit engine.Emit, res string, got T, ops resourceOps[T]) (T, error) {
	var changes []engine.Change
	if ops.diff != nil {
		changes = ops.diff(got)
	}
	inPlace, replace := splitChanges(changes)
	if len(inPlace) > 0 {
		updated, err := ops.update(ctx, got, inPlace)
		if err != nil {
			return got, fmt.Errorf("update %s: %w", res, err)
		}
		got = updated
		emit(engine.Event{Kind: engine.KindResource, Action: engine.ActionUpdate, Resource: res, ID: ops.id(got), Message: changeList(inPlace)})
	}
	if len(replace) > 0 {
		emit(engine.Event{Kind: engine.KindWarning, Resource: res, Message: changeList(replace) +
			"; apply left it as it is: revert the spec, or delete the resource and run apply again to create it anew"})
	}
	if len(changes) == 0 {
		emit(engine.Event{Kind: engine.KindResource, Action: engine.ActionReuse, Resource: res, ID: ops.id(got)})
	}
	return got, nil
}

// planItem says what apply would do to one resource: create it when it
// cannot be found, update it (with the old and new values) when it
// differs from the spec, replace it when Hetzner cannot change it in
// place, and reuse it otherwise.
func planItem[T any](ctx context.Context, st *state.Store, key string, want map[string]string, ops resourceOps[T], item engine.PlanItem) (engine.PlanItem, error) {
	got, found, err := find(ctx, st, key, want, ops)
	if err != nil {
		return item, err
	}
	if found && ops.diff != nil {
		item.Changes = ops.diff(got)
	}
	item.Action = planAction(found, item.Changes)
	return item, nil
}

// adoptAfterConflict returns the one resource matching want (with this
// state's cluster ID) when err is a uniqueness error: the earlier attempt
// of a retried create succeeded.
func adoptAfterConflict[T any](ctx context.Context, st *state.Store, err error, ops resourceOps[T], want map[string]string) (T, bool) {
	var zero T
	if !hcloud.IsError(err, hcloud.ErrorCodeUniquenessError) {
		return zero, false
	}
	selector := cloud.Selector(cloud.WithoutClusterID(want))
	relist := ops.relist
	if relist == nil {
		relist = ops.list
	}
	list, lerr := relist(ctx, selector)
	if lerr != nil {
		return zero, false
	}
	got, found, oerr := oneOwned(st, list, selector, ops)
	return got, found && oerr == nil
}
