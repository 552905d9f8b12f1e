package imaging

import (
	"context"
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
