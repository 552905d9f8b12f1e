package imaging

import (
	"context"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

func TestLeaseExpired(t *testing.T) {
	now := time.Unix(1_800_000_000, 0)
	for _, tc := range []struct {
		name   string
		labels map[string]string
		want   bool
	}{
		{"no lease (a build before leases)", map[string]string{}, true},
		{"malformed", map[string]string{LabelLease: "soon"}, true},
		{"past", map[string]string{LabelLease: "1799999999"}, true},
		{"ends now", map[string]string{LabelLease: "1800000000"}, true},
		{"future", map[string]string{LabelLease: "1800000001"}, false},
	} {
		if got := leaseExpired(tc.labels, now); got != tc.want {
			t.Errorf("%s: leaseExpired = %v, want %v", tc.name, got, tc.want)
		}
	}
}

// Two clusters building the same schematic at once (two processes, two
// Builders) must not delete each other's temporary server; both succeed
// and one snapshot remains.
func TestConcurrentBuildsOfOneKeyBothSucceed(t *testing.T) {
	sb := newSandbox(t, 42, nil)
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	r := sb.request(sb.schematic("siderolabs/tailscale"), "amd64")
	fast := func(o *Options) { o.LeaseDuration = 2 * time.Second; o.LeaseRefresh = 20 * time.Millisecond }

	// The second build starts once the first has its server booting: a
	// sweep by build key alone would delete that server.
	booting := make(chan struct{})
	var once sync.Once
	first := func(o *Options) {
		fast(o)
		o.Emit = func(e Event) {
			if e.Stage == StageBoot {
				once.Do(func() { close(booting) })
			}
		}
	}
	var wg sync.WaitGroup
	ids := make([]int64, 2)
	errs := make([]error, 2)
	for i, mod := range []func(*Options){first, fast} {
		if i == 1 {
			select {
			case <-booting:
			case <-ctx.Done():
				t.Fatal("the first build never booted its server")
			}
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			got, err := sb.builder(nil, mod).Ensure(ctx, []Request{r})
			ids[i], errs[i] = got[r.Key], err
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil || ids[i] == 0 {
			t.Fatalf("build %d: id %d, err %v", i, ids[i], err)
		}
	}
	if ids[0] != ids[1] {
		t.Errorf("the builds returned snapshots %d and %d; want one shared snapshot", ids[0], ids[1])
	}
	if img, err := sb.builder(nil).Find(ctx, r.Key); err != nil || img == nil || img.ID != ids[0] {
		t.Errorf("Find after both builds = %v, %v; want snapshot %d alone", img, err, ids[0])
	}
	if n := len(sb.hooks.records()); n < 2 {
		t.Errorf("%d rescue boots; want both builds to have run", n)
	}
	sb.assertNoTemporaries(t)
}

// Sweep keeps a live build's resources unless forced, and removes expired
// leases and resources without a lease.
func TestSweepHonoursLeases(t *testing.T) {
	sb := newSandbox(t, 43, nil)
	ctx := t.Context()
	k := Key{SchematicID: strings.Repeat("ab", 32), TalosVersion: testVersion, Arch: "amd64"}
	b := sb.builder(nil)
	with := func(until time.Time) map[string]string {
		l := b.temporaryLabels(k)
		l[LabelLease] = strconv.FormatInt(until.Unix(), 10)
		return l
	}
	plantServer(t, sb, "live-build", with(time.Now().Add(time.Hour)))
	plantServer(t, sb, "expired-build", with(time.Now().Add(-time.Minute)))
	plantServer(t, sb, "pre-lease-build", b.temporaryLabels(k))

	swept, err := b.Sweep(ctx, false)
	if err != nil {
		t.Fatalf("Sweep: %v", err)
	}
	if want := []string{"server expired-build", "server pre-lease-build"}; !slicesEqual(swept.Deleted, want) {
		t.Errorf("deleted %q, want %q", swept.Deleted, want)
	}
	if len(swept.Live) != 1 || !strings.HasPrefix(swept.Live[0], "server live-build (lease until ") {
		t.Errorf("live = %q", swept.Live)
	}
	// A build's own per-key sweep leaves it alone too.
	b.cleanKey(ctx, k)
	if s := sb.fake.Servers(); len(s) != 1 || s[0].Name != "live-build" {
		t.Fatalf("servers after the per-key sweep: %+v", s)
	}
	forced, err := b.Sweep(ctx, true)
	if err != nil || !slicesEqual(forced.Deleted, []string{"server live-build"}) || len(forced.Live) != 0 {
		t.Errorf("forced sweep = %+v, %v", forced, err)
	}
}

// A running build renews its lease, so it outlives LeaseDuration.
func TestLeaseIsRenewed(t *testing.T) {
	sb := newSandbox(t, 44, nil)
	ctx := t.Context()
	k := Key{SchematicID: strings.Repeat("ab", 32), TalosVersion: testVersion, Arch: "amd64"}
	b := sb.builder(nil, func(o *Options) { o.LeaseDuration = 2 * time.Second; o.LeaseRefresh = 10 * time.Millisecond })
	ls := b.startLease(ctx, k, "run-1")
	srv := plantServer(t, sb, "run-1", ls.labels())
	ls.holdServer(srv)
	first, _ := leaseUntil(srv.Labels)
	deadline := time.Now().Add(5 * time.Second)
	for {
		cur, _, err := sb.client.Server.GetByID(ctx, srv.ID)
		if err != nil {
			t.Fatal(err)
		}
		if until, ok := leaseUntil(cur.Labels); ok && until.After(first) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("lease not renewed: labels %v", cur.Labels)
		}
		time.Sleep(50 * time.Millisecond)
	}
	ls.end()
}

// A run the state knows has ended (a killed process's build) is swept
// although its lease still runs; another run's live lease is kept.
func TestSweepEndedReclaimsKilledRuns(t *testing.T) {
	sb := newSandbox(t, 45, nil)
	ctx := t.Context()
	k := Key{SchematicID: strings.Repeat("cd", 32), TalosVersion: testVersion, Arch: "amd64"}
	b := sb.builder(nil, func(o *Options) { o.Ended = func(run string) bool { return run == "killed-run" } })
	live := func(run string) map[string]string {
		l := b.temporaryLabels(k)
		l[LabelLease] = strconv.FormatInt(time.Now().Add(time.Hour).Unix(), 10)
		l[LabelRun] = run
		return l
	}
	plantServer(t, sb, "killed-run", live("killed-run"))
	plantServer(t, sb, "other-process-run", live("other-process-run"))
	swept, err := b.SweepEnded(ctx)
	if err != nil {
		t.Fatalf("SweepEnded: %v", err)
	}
	if want := []string{"server killed-run"}; !slicesEqual(swept, want) {
		t.Errorf("deleted %q, want %q", swept, want)
	}
	if s := sb.fake.Servers(); len(s) != 1 || s[0].Name != "other-process-run" {
		t.Fatalf("servers left: %+v", s)
	}
}
