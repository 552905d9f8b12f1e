package talosapi

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/siderolabs/talos/pkg/machinery/api/machine"
)

// EtcdRecover uploads an etcd snapshot to a control plane that has not been
// bootstrapped yet; the next BootstrapRecover starts etcd from it (Talos
// disaster recovery: `talosctl etcd recover` then `talosctl bootstrap
// --recover-from`, website content/v1.13/advanced/disaster-recovery.md).
func (c *Client) EtcdRecover(ctx context.Context, snapshot io.Reader) error {
	if _, err := c.c.EtcdRecover(ctx, snapshot); err != nil {
		return c.wrap("upload etcd snapshot for recovery", err)
	}

	return nil
}

// BootstrapRecover bootstraps etcd from the snapshot uploaded with
// EtcdRecover, retrying while the node's services are still starting
// ("bootstrap is not available yet"). Unlike BootstrapOnce it never skips:
// a node whose etcd already runs answers AlreadyExists, which is returned,
// since recovering over a live etcd would lose data.
func (c *Client) BootstrapRecover(ctx context.Context) error {
	for {
		err := c.c.Bootstrap(ctx, &machine.BootstrapRequest{RecoverEtcd: true})
		if err == nil {
			return nil
		}

		if !IsBootstrapNotReady(err) {
			return c.wrap("bootstrap etcd from the snapshot", err)
		}

		t := time.NewTimer(250 * time.Millisecond)
		select {
		case <-ctx.Done():
			t.Stop()

			return fmt.Errorf("bootstrap etcd from the snapshot at %s: %w (last error: %w)", c.endpoint, ctx.Err(), err)
		case <-t.C:
		}
	}
}
