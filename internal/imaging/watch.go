package imaging

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/hetznercloud/hcloud-go/v2/hcloud"

	"github.com/ohmytalos/ohmytalos/internal/cloud"
)

// actionsPerPoll is how many action IDs one GET /actions carries, as
// hcloud-go's ActionClient.WaitForFunc chunks them (hcloud/action_waiter.go).
const actionsPerPoll = 25

// actionWatcher polls the running actions of every build of one Builder
// together: one GET /actions?id=a&id=b... per round instead of one per
// build. Each action keeps its own backoff (first poll soon, then growing,
// capped); a round happens when any action is due and refreshes all of
// them, so concurrent builds share their polls. A poll loop runs only while
// some wait is registered.
type actionWatcher struct {
	c       *hcloud.Client
	backoff hcloud.BackoffFunc

	mu    sync.Mutex
	waits map[*actionWait]struct{}
	wake  chan struct{}      // a wait was added: recompute the next round
	stop  context.CancelFunc // stops the running poll loop; nil when none runs
}

// actionWait is one caller waiting for its actions.
type actionWait struct {
	// running is owned by the watcher (guarded by actionWatcher.mu): the
	// actions still polled for this wait and their schedules.
	running map[int64]*pollSchedule

	mu      sync.Mutex
	updates []*hcloud.Action
	err     error
	signal  chan struct{} // capacity 1: updates or err are pending
}

// pollSchedule is one action's backoff: polls made so far, when the next
// is due, and since when it is waited for (what its progress is measured
// against, cloud.NextPoll).
type pollSchedule struct {
	polls int
	due   time.Time
	since time.Time
}

func newActionWatcher(c *hcloud.Client, backoff hcloud.BackoffFunc) *actionWatcher {
	return &actionWatcher{c: c, backoff: backoff, waits: map[*actionWait]struct{}{}, wake: make(chan struct{}, 1)}
}

// wait blocks until every action finished, calling handle with each update
// (and at once with actions already finished), like hcloud-go's
// ActionClient.WaitForFunc: an error from handle or from polling ends the
// wait with that error, a cancelled ctx with ctx.Err().
func (w *actionWatcher) wait(ctx context.Context, handle func(*hcloud.Action) error, actions ...*hcloud.Action) error {
	running, err := cloud.HandleFinished(actions, handle)
	if err != nil || len(running) == 0 {
		return err
	}
	aw := &actionWait{signal: make(chan struct{}, 1)}
	w.add(aw, slices.Collect(maps.Keys(running)))
	defer w.remove(aw)
	for len(running) > 0 {
		select {
		case <-ctx.Done():
			return fmt.Errorf("%w: remaining running actions: %v", ctx.Err(), slices.Sorted(maps.Keys(running)))
		case <-aw.signal:
		}
		updates, err := aw.take()
		for _, u := range updates {
			if u.Status != hcloud.ActionStatusRunning {
				delete(running, u.ID)
			}
			if herr := handle(u); herr != nil {
				return herr
			}
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// add registers aw for ids, first due after backoff(0), and starts the
// poll loop if none runs.
func (w *actionWatcher) add(aw *actionWait, ids []int64) {
	w.mu.Lock()
	defer w.mu.Unlock()
	now := time.Now()
	due := now.Add(w.backoff(0))
	aw.running = make(map[int64]*pollSchedule, len(ids))
	for _, id := range ids {
		aw.running[id] = &pollSchedule{due: due, since: now}
	}
	w.waits[aw] = struct{}{}
	if w.stop == nil {
		// The loop outlives no wait: remove cancels it with the last one.
		ctx, cancel := context.WithCancel(context.Background())
		w.stop = cancel
		go w.loop(ctx)
		return
	}
	select {
	case w.wake <- struct{}{}:
	default:
	}
}

// remove unregisters aw; the last one stops the poll loop and aborts its
// request in flight.
func (w *actionWatcher) remove(aw *actionWait) {
	w.mu.Lock()
	defer w.mu.Unlock()
	delete(w.waits, aw)
	if len(w.waits) == 0 && w.stop != nil {
		w.stop()
		w.stop = nil
	}
}

// loop polls whenever the earliest action is due, until ctx ends.
func (w *actionWatcher) loop(ctx context.Context) {
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	for {
		w.mu.Lock()
		if ctx.Err() != nil {
			w.mu.Unlock()
			return
		}
		next, ok := w.nextDue()
		w.mu.Unlock()
		if ok {
			timer.Reset(time.Until(next))
		} else {
			timer.Reset(time.Hour) // nothing to poll until a wait is added
		}
		select {
		case <-ctx.Done():
			return
		case <-w.wake:
			timer.Stop()
			continue
		case <-timer.C:
		}
		if ok {
			w.poll(ctx)
		}
	}
}

// nextDue is the earliest due time over every running action; callers
// hold w.mu.
func (w *actionWatcher) nextDue() (time.Time, bool) {
	var next time.Time
	found := false
	for aw := range w.waits {
		for _, s := range aw.running {
			if !found || s.due.Before(next) {
				next, found = s.due, true
			}
		}
	}
	return next, found
}

// poll fetches every running action in as few requests as possible and
// hands each wait its updates, or the error.
func (w *actionWatcher) poll(ctx context.Context) {
	w.mu.Lock()
	set := map[int64]bool{}
	for aw := range w.waits {
		for id := range aw.running {
			set[id] = true
		}
	}
	w.mu.Unlock()
	ids := slices.Sorted(maps.Keys(set))
	var got []*hcloud.Action
	var err error
	for chunk := range slices.Chunk(ids, actionsPerPoll) {
		var part []*hcloud.Action
		part, err = w.c.Action.AllWithOpts(ctx, hcloud.ActionListOpts{ID: chunk, Sort: []string{"status", "id"}})
		if err != nil {
			break
		}
		got = append(got, part...)
	}

	w.mu.Lock()
	defer w.mu.Unlock()
	if ctx.Err() != nil {
		return // every wait left; nobody to tell
	}
	now := time.Now()
	for aw := range w.waits {
		var mine []int64
		for id := range aw.running {
			if set[id] {
				mine = append(mine, id)
			}
		}
		if len(mine) == 0 {
			continue // registered after the request went out
		}
		if err != nil {
			clear(aw.running)
			aw.deliver(nil, err)
			continue
		}
		var updates []*hcloud.Action
		for _, a := range got {
			s, ok := aw.running[a.ID]
			if !ok || !set[a.ID] {
				continue
			}
			updates = append(updates, a)
			if a.Status != hcloud.ActionStatusRunning {
				delete(aw.running, a.ID)
				continue
			}
			s.polls++
			// A snapshot reports its progress: poll when it should be done
			// rather than every backoff step.
			s.due = now.Add(cloud.NextPoll(a.Progress, now.Sub(s.since), w.backoff(s.polls), w.backoff(0)))
		}
		var missing []int64
		for _, id := range mine {
			if !slices.ContainsFunc(got, func(a *hcloud.Action) bool { return a.ID == id }) {
				missing = append(missing, id)
			}
		}
		if len(missing) > 0 {
			// As WaitForFunc: an action the API does not know would be
			// polled forever.
			clear(aw.running)
			slices.Sort(missing)
			aw.deliver(updates, fmt.Errorf("actions not found: %v", missing))
			continue
		}
		aw.deliver(updates, nil)
	}
}

// deliver queues updates (and a final error) for the waiting caller.
func (aw *actionWait) deliver(updates []*hcloud.Action, err error) {
	aw.mu.Lock()
	aw.updates = append(aw.updates, updates...)
	if err != nil && aw.err == nil {
		aw.err = err
	}
	aw.mu.Unlock()
	select {
	case aw.signal <- struct{}{}:
	default:
	}
}

// take returns and clears what was delivered.
func (aw *actionWait) take() ([]*hcloud.Action, error) {
	aw.mu.Lock()
	defer aw.mu.Unlock()
	u, err := aw.updates, aw.err
	aw.updates, aw.err = nil, nil
	return u, err
}
