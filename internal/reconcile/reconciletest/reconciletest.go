// Package reconciletest holds what the unit tests of the reconcile
// services share: an action waiter that records what it waited for, and
// the call log with injected failures of their in-memory clients. Only
// tests import it.
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
