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
}

// startPoller calls step every period, in its own goroutine, until ctx
// ends, stop is called, or step answers false.
func startPoller(ctx context.Context, every time.Duration, step func(context.Context) bool) *poller {
	ctx, cancel := context.WithCancel(ctx)
	p := &poller{cancel: cancel, done: make(chan struct{})}

	go func() {
		defer close(p.done)

		for {
			select {
			case <-ctx.Done():
				return
			case <-time.After(every):
			}

			if !step(ctx) {
				return
			}
		}
	}()

	return p
}

// stop ends the goroutine and waits for it.
func (p *poller) stop() {
	p.cancel()
	<-p.done
}
