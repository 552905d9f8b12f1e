package kubereal

import (
	"context"
	"time"
)

// poller is the goroutine of a simulated controller that polls the API
// server (the cloud controller, the cilium operator, a kubelet).
type poller struct {
	cancel context.CancelFunc
	done   chan struct{}
	wake   chan struct{}
}

// startPoller calls step every period, in its own goroutine, until ctx
// ends, stop is called, or step answers false; wakeAfter calls it early.
func startPoller(ctx context.Context, every time.Duration, step func(context.Context) bool) *poller {
	ctx, cancel := context.WithCancel(ctx)
	p := &poller{cancel: cancel, done: make(chan struct{}), wake: make(chan struct{}, 1)}

	go func() {
		defer close(p.done)

		for {
			t := time.NewTimer(every)
			select {
			case <-ctx.Done():
				t.Stop()

				return
			case <-t.C:
			case <-p.wake:
				t.Stop()
			}

			if !step(ctx) {
				return
			}
		}
	}()

	return p
}

// wakeAfter runs the next step once d has passed (or earlier, on the
// period), so a modelled wait ends when the model says, not on the next
// poll.
func (p *poller) wakeAfter(d time.Duration) {
	time.AfterFunc(max(d, 0), func() {
		select {
		case p.wake <- struct{}{}:
		default:
		}
	})
}

// stop ends the goroutine and waits for it.
func (p *poller) stop() {
	p.cancel()
	<-p.done
}
