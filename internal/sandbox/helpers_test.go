package sandbox_test

import (
	"context"
	"testing"
	"time"

	"github.com/hetznercloud/hcloud-go/v2/hcloud"

	"github.com/ohmytalos/ohmytalos/internal/sandbox"
)

// startSandbox starts an in-process sandbox in a temporary work dir (its
// disks live there) and an hcloud-go client for it that polls actions
// quickly; both end with the test, within 30 seconds.
func startSandbox(t *testing.T) (context.Context, string, *sandbox.Sandbox, *hcloud.Client) {
	t.Helper()
	work := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	sb, err := sandbox.Start(ctx, sandbox.Options{WorkDir: work})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sb.Close() })
	c := hcloud.NewClient(hcloud.WithEndpoint(sb.HCloudURL), hcloud.WithToken(sb.Token),
		hcloud.WithPollOpts(hcloud.PollOpts{BackoffFunc: hcloud.ConstantBackoff(5 * time.Millisecond)}))
	return ctx, work, sb, c
}
