package cloud_test

import (
	"context"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/hetznercloud/hcloud-go/v2/hcloud"

	"github.com/ohmytalos/ohmytalos/internal/cloud"
	"github.com/ohmytalos/ohmytalos/internal/sandbox/hcloudfake"
)

func TestNextPoll(t *testing.T) {
	const base, backoff = 100 * time.Millisecond, 700 * time.Millisecond
	cases := []struct {
		name     string
		progress int
		ran      time.Duration
		want     time.Duration
	}{
		{"no progress: backoff", 0, 3 * time.Second, backoff},
		{"finished: backoff (not polled again)", 100, 3 * time.Second, backoff},
		{"half way: as long again", 50, 4 * time.Second, 4*time.Second + base/2},
		{"coarse early figure: half the estimate", 10, time.Second, 9*time.Second/2 + base/2},
		{"almost done: at least base", 99, time.Second, base},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := cloud.NextPoll(c.progress, c.ran, backoff, base); got != c.want {
				t.Errorf("NextPoll(%d, %v) = %v, want %v", c.progress, c.ran, got, c.want)
			}
		})
	}
}

// A long action is polled a few times, guided by its progress, and the
// wait ends soon after it finishes.
func TestWaiterPollsByProgress(t *testing.T) {
	const dur = 3 * time.Second
	f := hcloudfake.New(hcloudfake.Options{Token: "t", Durations: map[string]time.Duration{"create_image": dur}})
	srv := httptest.NewServer(f)
	t.Cleanup(srv.Close)
	c := hcloud.NewClient(hcloud.WithEndpoint(srv.URL), hcloud.WithToken("t"))
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	sv, _, err := c.Server.Create(ctx, hcloud.ServerCreateOpts{Name: "a", ServerType: &hcloud.ServerType{Name: "cx23"},
		Image: &hcloud.Image{Name: "debian-12"}, Location: &hcloud.Location{Name: "nbg1"}, StartAfterCreate: hcloud.Ptr(false)})
	if err != nil {
		t.Fatal(err)
	}
	w := cloud.NewWaiter(c, 50*time.Millisecond)
	if err := w.WaitFor(ctx, sv.Action); err != nil {
		t.Fatal(err)
	}
	before := f.Stats().ByRoute["GET /actions"]
	img, _, err := c.Server.CreateImage(ctx, sv.Server, &hcloud.ServerCreateImageOpts{Type: hcloud.ImageTypeSnapshot})
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	var last *hcloud.Action
	if err := w.WaitForFunc(ctx, func(a *hcloud.Action) error { last = a; return nil }, img.Action); err != nil {
		t.Fatal(err)
	}
	took := time.Since(start)
	polls := f.Stats().ByRoute["GET /actions"] - before
	if last == nil || last.Status != hcloud.ActionStatusSuccess {
		t.Fatalf("last update %+v, want success", last)
	}
	// hcloud-go's backoff from 50ms (x1.5, capped at 500ms) polls about 10
	// times for 3s.
	if polls > 5 {
		t.Errorf("%d polls for a %v action, want at most 5", polls, dur)
	}
	if took > dur+500*time.Millisecond {
		t.Errorf("the wait ended %v after a %v action started", took, dur)
	}
}

func TestWaiterFailsOnAnUnknownAction(t *testing.T) {
	f := hcloudfake.New(hcloudfake.Options{Token: "t"})
	srv := httptest.NewServer(f)
	t.Cleanup(srv.Close)
	c := hcloud.NewClient(hcloud.WithEndpoint(srv.URL), hcloud.WithToken("t"))
	err := cloud.NewWaiter(c, 10*time.Millisecond).WaitFor(context.Background(), &hcloud.Action{ID: 999, Status: hcloud.ActionStatusRunning})
	if err == nil {
		t.Fatal("waiting for an action the API does not know succeeded")
	}
}
