package steps

import (
	"context"
	"fmt"
	"strings"

	"github.com/hetznercloud/hcloud-go/v2/hcloud"

	"github.com/ohmytalos/ohmytalos/internal/cloud"
	"github.com/ohmytalos/ohmytalos/internal/engine"
	"github.com/ohmytalos/ohmytalos/internal/reconcile"
	"github.com/ohmytalos/ohmytalos/internal/state"
)

// The resources are found, created and compared by their reconcile
// services (internal/reconcile/...: Find, Create, Plan, Reconcile over
// the hcloud-go calls each makes), after cluster-api-provider-hetzner's
// services (syself/cluster-api-provider-hetzner, pkg/services/hcloud):
// get by the stored ID, else list by labels (two matches is an error),
// else create (adopting after a lost create response), then compare with
// the spec and update in place what Hetzner can change, reporting what
// it cannot. What every kind shares on the steps' side is here: the
// query from the state, adoption, the checkpoint and the events.

// query finds the resource stored under key, else the one whose labels
// match want's (without the cluster ID) and whose cluster ID is this
// state's. A match with the cluster's name but another or no ID is an
// error: another checkout owns it.
func query(st *state.Store, key string, want map[string]string) reconcile.Query {
	q := reconcile.Query{Selector: cloud.Selector(cloud.WithoutClusterID(want)), Owner: stateOwner{st}}
	if r, ok := st.Resource(key); ok {
		q.ID = r.ID
	}
	return q
}

// stateOwner owns what carries the state's cluster ID.
type stateOwner struct{ st *state.Store }

// Owns implements reconcile.Owner.
func (o stateOwner) Owns(labels map[string]string) bool { return ownedByID(o.st, labels) }

// Foreign implements reconcile.Owner.
func (o stateOwner) Foreign(kind string, names []string, labels map[string]string) error {
	return foreignError(o.st, kind, names, labels)
}

// refinder is the part of a reconcile service's Finder adopt uses.
type refinder[T any] interface {
	Refind(ctx context.Context, q reconcile.Query) (T, bool, error)
	Kind() string
}

// adopt checks a create's error. A create whose response was lost (and
// retried by hcloud-go) made the resource: on a uniqueness error the one
// match of q is adopted (adopted true: the create's actions are gone
// with its response). Another error gets limitHint's advice.
func adopt[T any](ctx context.Context, f refinder[T], q reconcile.Query, got T, err error) (_ T, adopted bool, _ error) {
	if err == nil {
		return got, false, nil
	}
	if hcloud.IsError(err, hcloud.ErrorCodeUniquenessError) {
		if a, ok, rerr := f.Refind(ctx, q); rerr == nil && ok {
			return a, true, nil
		}
	}
	var zero T
	return zero, false, limitHint(f.Kind(), err)
}

// finder is the part of a reconcile service's Finder findOrCreate uses.
type finder[T any] interface {
	refinder[T]
	Find(ctx context.Context, q reconcile.Query) (T, bool, error)
	Meta(v T) reconcile.Meta
}

// ensured is a resource found, else created, and checkpointed.
type ensured[T any] struct {
	got   T
	res   string           // its event name (kind/name)
	found bool             // it existed before this run looked
	acts  []*hcloud.Action // a create's actions to wait for (none when adopted)
}

// action is the one action a create returned (nil when found or adopted).
func (e ensured[T]) action() *hcloud.Action {
	if len(e.acts) == 0 {
		return nil
	}
	return e.acts[0]
}

// findOrCreate finds q's resource through f, else makes it with create
// (adopting the one a create whose response was lost made: its actions
// are gone with that response), then checkpoints it under key. On a
// checkpoint error the create's actions still come back.
func findOrCreate[T any](ctx context.Context, env *engine.Env, step engine.StepName, key string, f finder[T], q reconcile.Query,
	create func(context.Context) (T, []*hcloud.Action, error)) (ensured[T], error) {
	var e ensured[T]
	var err error
	if e.got, e.found, err = f.Find(ctx, q); err != nil {
		return ensured[T]{}, err
	}
	if !e.found {
		var adopted bool
		e.got, e.acts, err = create(ctx)
		if e.got, adopted, err = adopt(ctx, f, q, e.got, err); err != nil {
			return ensured[T]{}, err
		}
		if adopted {
			e.acts = nil
		}
	}
	e.res, err = checkpoint(env, step, key, f.Kind(), f.Meta(e.got))
	return e, err
}

// noActions is a create of w that leaves no action to wait for.
func noActions[T, W any](create func(context.Context, W) (T, error), w W) func(context.Context) (T, []*hcloud.Action, error) {
	return func(ctx context.Context) (T, []*hcloud.Action, error) {
		got, err := create(ctx, w)
		return got, nil, err
	}
}

// reconcileChanges makes the in-place part of a found resource's changes
// with update, then reports them (emitChanges).
func reconcileChanges(emit engine.Emit, res string, id int64, changes []engine.Change, update func() error) error {
	if needsUpdate(changes) {
		if err := update(); err != nil {
			return updateError(res, err)
		}
	}
	emitChanges(emit, res, id, changes)
	return nil
}

// checkpoint records a found or created resource under key, keeping the
// attributes recorded for the same ID (such as a load balancer's pending
// create action), and returns its event name (kind/name).
func checkpoint(env *engine.Env, step engine.StepName, key, kind string, m reconcile.Meta) (string, error) {
	rec := state.Resource{Kind: kind, ID: m.ID, Name: m.Name, Step: string(step)}
	if prev, ok := env.State.Resource(key); ok && prev.ID == rec.ID {
		rec.Attrs = prev.Attrs
	}
	return kind + "/" + m.Name, env.State.PutResource(key, rec)
}

// emitCreated reports a created resource; detail describes it (optional).
func emitCreated(emit engine.Emit, res string, id int64, detail string) {
	emit(engine.Event{Kind: engine.KindResource, Action: engine.ActionCreate, Resource: res, ID: id, Message: detail})
}

// needsUpdate reports whether changes hold some Hetzner makes in place.
func needsUpdate(changes []engine.Change) bool {
	inPlace, _ := splitChanges(changes)
	return len(inPlace) > 0
}

// updateError names the resource whose in-place update failed.
func updateError(res string, err error) error { return fmt.Errorf("update %s: %w", res, err) }

// emitChanges reports a found resource once its in-place changes are made:
// updated (with them), reused when nothing differs, and a warning for
// what Hetzner cannot change in place (the resource is left as it is).
func emitChanges(emit engine.Emit, res string, id int64, changes []engine.Change) {
	inPlace, replace := splitChanges(changes)
	if len(inPlace) > 0 {
		emit(engine.Event{Kind: engine.KindResource, Action: engine.ActionUpdate, Resource: res, ID: id, Message: changeList(inPlace)})
	}
	if len(replace) > 0 {
		emit(engine.Event{Kind: engine.KindWarning, Resource: res, Message: changeList(replace) +
			"; apply left it as it is: revert the spec, or delete the resource and run apply again to create it anew"})
	}
	if len(changes) == 0 {
		emit(engine.Event{Kind: engine.KindResource, Action: engine.ActionReuse, Resource: res, ID: id})
	}
}

// limitFields name the spec's limit of each kind a create can exceed.
var limitFields = map[string]string{"server": "limits.servers", "volume": "limits.volumes", "placement-group": "limits.placementGroups"}

// limitHint adds to a create refused with 403 resource_limit_exceeded what
// to do: the project reached one of its limits, which Hetzner's API does not
// tell beforehand (a server's create also counts its primary IPs).
func limitHint(kind string, err error) error {
	if !hcloud.IsError(err, hcloud.ErrorCodeResourceLimitExceeded) {
		return err
	}
	field := limitFields[kind]
	if field == "" {
		field = "limits"
	}
	return fmt.Errorf("%w: the Hetzner project reached one of its limits; see them in the Cloud Console (Limits), delete what is unused or ask Hetzner to raise the limit, and write it in the spec as %s (and limits.primaryIPs) so that pre-flight catches it before apply", err, field)
}

// planned is item once its resource was looked up: its changes (when
// found) and what apply would do.
func planned(item engine.PlanItem, found bool, changes []engine.Change) engine.PlanItem {
	if found {
		item.Changes = changes
	}
	item.Action = planAction(found, item.Changes)
	return item
}

// planAction is create for a resource not found, else update, replace or
// reuse after its changes.
func planAction(found bool, changes []engine.Change) engine.Action {
	if !found {
		return engine.ActionCreate
	}
	if _, replace := splitChanges(changes); len(replace) > 0 {
		return engine.ActionReplace
	}
	if len(changes) > 0 {
		return engine.ActionUpdate
	}
	return engine.ActionReuse
}

func splitChanges(changes []engine.Change) (inPlace, replace []engine.Change) {
	for _, c := range changes {
		if c.Replace {
			replace = append(replace, c)
		} else {
			inPlace = append(inPlace, c)
		}
	}
	return inPlace, replace
}

func changeList(changes []engine.Change) string {
	parts := make([]string, len(changes))
	for i, c := range changes {
		parts[i] = c.String()
	}
	return strings.Join(parts, "; ")
}

// Field names of the changes the reconcile functions compare.
const (
	fieldLabels = "labels"
)

// labelsChange shows reconcile.DiffLabels as a change of the labels
// field (the live and wanted values of the labels that differ).
func labelsChange(have, want map[string]string, owned ...string) []engine.Change {
	d := reconcile.DiffLabels(have, want, owned...)
	if d.Empty() {
		return nil
	}
	return []engine.Change{labelsDisplay(d)}
}

// labelsDisplay renders a label diff for display.
func labelsDisplay(d reconcile.LabelDiff) engine.Change {
	return engine.Change{Field: fieldLabels, Old: cloud.Selector(d.Have), New: cloud.Selector(d.Want)}
}

// mergedLabels is reconcile.MergeLabels.
func mergedLabels(have, want map[string]string, owned ...string) map[string]string {
	return reconcile.MergeLabels(have, want, owned...)
}
