// Package reconciletest holds what the unit tests of the reconcile
// services share: an action waiter that records what it waited for, and
// the call log with injected failures and the store of their in-memory
// clients. Only tests import it.
package reconciletest

import (
	"context"
	"maps"
	"slices"

	"github.com/hetznercloud/hcloud-go/v2/hcloud"
)

// Actions is a reconcile.ActionWaiter whose actions are all done at once;
// it records the IDs it was asked to wait for.
type Actions struct {
	Waited []int64
}

// WaitFor records the actions' IDs and returns nil.
func (a *Actions) WaitFor(_ context.Context, actions ...*hcloud.Action) error {
	for _, x := range actions {
		a.Waited = append(a.Waited, x.ID)
	}
	return nil
}

// Record appends name to calls and returns the error fail holds for it,
// once: the error is removed, so a retry of the same call succeeds.
func Record(calls *[]string, fail map[string]error, name string) error {
	*calls = append(*calls, name)
	if err, ok := fail[name]; ok {
		delete(fail, name)
		return err
	}
	return nil
}

// RetryLocked returns a retry function (the shape the services take) that
// calls fn again while it fails with locked, counting every try in tries.
func RetryLocked(tries *int) func(context.Context, func() error) error {
	return func(_ context.Context, fn func() error) error {
		for {
			*tries++
			if err := fn(); !hcloud.IsError(err, hcloud.ErrorCodeLocked) {
				return err
			}
		}
	}
}

// ByID lists an in-memory client's resources in the order of their IDs,
// as a listing of them answers.
func ByID[T any](m map[int64]T) []T {
	var out []T
	for _, id := range slices.Sorted(maps.Keys(m)) {
		out = append(out, m[id])
	}
	return out
}

// Store is an in-memory client's resources by ID; it answers the two
// finding calls of reconcile.Lookup (T the resource, O its list options).
// AllWithOpts lists every resource whatever the options, as the services
// keep only the ones they own.
type Store[T any, O any] map[int64]T

// GetByID returns the resource with id, the zero T (nil) when there is none.
func (s Store[T, O]) GetByID(_ context.Context, id int64) (T, *hcloud.Response, error) {
	return s[id], nil, nil
}

// AllWithOpts lists every resource in the order of their IDs.
func (s Store[T, O]) AllWithOpts(context.Context, O) ([]T, error) {
	return ByID(s), nil
}
