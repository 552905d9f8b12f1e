package cloud

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/hetznercloud/hcloud-go/v2/hcloud"
)

// DefaultPollInterval is the first action poll when none is configured.
const DefaultPollInterval = 500 * time.Millisecond

// Backoff is the action poll schedule NewClient gives hcloud-go: from poll
// (DefaultPollInterval when 0), growing x1.5 up to 10 x poll.
func Backoff(poll time.Duration) hcloud.BackoffFunc {
	if poll <= 0 {
		poll = DefaultPollInterval
	}
	return hcloud.ExponentialBackoffWithOpts(hcloud.ExponentialBackoffOpts{Base: poll, Multiplier: 1.5, Cap: 10 * poll})
}

// NextPoll is how long to wait before polling a running action again. An
// action reports its progress (0-100); after ran at progress p it needs
// about ran x (100-p)/p more, so the next poll goes there, plus half of
// base for the request's own latency. Below 20 % the integer progress is
// too coarse to trust (1 % may mean 1.9 %): the wait goes halfway and
// looks again. Without progress (0, as many Hetzner actions report until
// they finish) it is the backoff. Never less than base.
func NextPoll(progress int, ran, backoff, base time.Duration) time.Duration {
	if progress <= 0 || progress >= 100 || ran <= 0 {
		return backoff
	}
	eta := ran*time.Duration(100)/time.Duration(progress) - ran
	if progress < 20 {
		eta /= 2
	}
	return max(eta+base/2, base)
}

// Waiter waits for actions like hcloud-go's ActionClient.WaitForFunc (one
// GET /actions for up to 25 running actions), but schedules each poll by
// the progress the actions report (NextPoll), so a long action such as a
// snapshot is polled a few times, not every few seconds.
type Waiter struct {
	c    *hcloud.Client
	poll time.Duration
}

// NewWaiter returns a Waiter on c whose polls start at poll
// (DefaultPollInterval when 0), as NewClient's.
func NewWaiter(c *hcloud.Client, poll time.Duration) Waiter {
	if poll <= 0 {
		poll = DefaultPollInterval
	}
	return Waiter{c: c, poll: poll}
}

// actionsPerPoll is how many IDs one GET /actions carries, as hcloud-go's
// WaitForFunc chunks them (hcloud/action_waiter.go).
const actionsPerPoll = 25

// WaitFor waits until every action succeeded; the first that failed ends
// it with its error (hcloud.ActionError).
func (w Waiter) WaitFor(ctx context.Context, actions ...*hcloud.Action) error {
	return w.WaitForFunc(ctx, func(a *hcloud.Action) error {
		if a.Status == hcloud.ActionStatusError {
			return a.Error()
		}
		return nil
	}, actions...)
}

// WaitForFunc waits until every action finished, calling handle with each
// update (and at once with actions already finished); an error from handle
// or from polling ends the wait with it.
func (w Waiter) WaitForFunc(ctx context.Context, handle func(*hcloud.Action) error, actions ...*hcloud.Action) error {
	start := time.Now()
	running, err := HandleFinished(actions, handle)
	if err != nil {
		return err
	}
	backoff := Backoff(w.poll)
	delay := backoff(0)
	for polls := 1; len(running) > 0; polls++ {
		t := time.NewTimer(delay)
		select {
		case <-ctx.Done():
			t.Stop()
			return fmt.Errorf("%w: remaining running actions: %v", ctx.Err(), slices.Sorted(maps.Keys(running)))
		case <-t.C:
		}
		updates, err := w.fetch(ctx, slices.Sorted(maps.Keys(running)))
		if err != nil {
			return err
		}
		ran := time.Since(start)
		delay = -1
		for _, u := range updates {
			if u.Status != hcloud.ActionStatusRunning {
				delete(running, u.ID)
			} else {
				// The soonest action due sets the next round; it refreshes all.
				d := NextPoll(u.Progress, ran, backoff(polls), w.poll)
				if delay < 0 || d < delay {
					delay = d
				}
			}
			if err := handle(u); err != nil {
				return err
			}
		}
	}
	return nil
}

// HandleFinished calls handle with each of actions that no longer runs
// and returns the IDs of the running ones, as a wait for them starts (nil
// actions are passed over); an error from handle ends it.
func HandleFinished(actions []*hcloud.Action, handle func(*hcloud.Action) error) (map[int64]bool, error) {
	running := map[int64]bool{}
	for _, a := range actions {
		if a == nil {
			continue
		}
		if a.Status == hcloud.ActionStatusRunning {
			running[a.ID] = true
			continue
		}
		if err := handle(a); err != nil {
			return nil, err
		}
	}
	return running, nil
}

// fetch reads the actions ids, failing on any the API does not know (it
// would be polled forever).
func (w Waiter) fetch(ctx context.Context, ids []int64) ([]*hcloud.Action, error) {
	var out []*hcloud.Action
	for chunk := range slices.Chunk(ids, actionsPerPoll) {
		part, err := w.c.Action.AllWithOpts(ctx, hcloud.ActionListOpts{ID: chunk, Sort: []string{"status", "id"}})
		if err != nil {
			return nil, err
		}
		out = append(out, part...)
	}
	if len(out) != len(ids) {
		var missing []int64
		for _, id := range ids {
			if !slices.ContainsFunc(out, func(a *hcloud.Action) bool { return a.ID == id }) {
				missing = append(missing, id)
			}
		}
		return nil, fmt.Errorf("actions not found: %v", missing)
	}
	return out, nil
}
