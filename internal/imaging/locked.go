package imaging

import (
	"context"
	"fmt"
	"time"

	"github.com/hetznercloud/hcloud-go/v2/hcloud"
)

// maxLockedTries bounds how often an action is retried while its server is
// locked.
const maxLockedTries = 120

// whileLocked calls fn again while Hetzner answers 423 "locked": another
// action still runs on the server, for example the one whose answer was
// lost and which hcloud-go's retry met. hcloud-go does not retry locked
// (hcloud/client_handler_retry.go, retryPolicy).
func (b *Builder) whileLocked(ctx context.Context, fn func() error) error {
	pause := b.opts.PollInterval
	for tries := 1; ; tries++ {
		err := fn()
		if !hcloud.IsError(err, hcloud.ErrorCodeLocked) || tries >= maxLockedTries {
			return err
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(pause):
		}
	}
}

// act makes call while Hetzner answers locked, then waits for the action
// it started, reported as stage; what names the call in the error.
func (b *Builder) act(ctx context.Context, k Key, stage, what string, call func() (*hcloud.Action, error)) error {
	var a *hcloud.Action
	err := b.whileLocked(ctx, func() (err error) {
		a, err = call()
		return err
	})
	if err == nil {
		err = b.wait(ctx, k, stage, a)
	}
	if err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	return nil
}
