package imaging

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/ohmytalos/ohmytalos/internal/sandbox/hcloudfake"
	"github.com/ohmytalos/ohmytalos/internal/sandbox/rescuefake"
)

func TestFailuresLeaveNoTemporaries(t *testing.T) {
	cases := []struct {
		name    string
		octet   int
		rescue  []rescuefake.Option
		setup   func(sb *sandbox)
		version string
		cancel  bool // cancel the context once the write starts
		wantErr string
	}{
		{name: "server create", octet: 10, wantErr: "create temporary server",
			setup: func(sb *sandbox) { sb.fake.SetUnavailable("cx23", "fsn1") }},
		{name: "rescue action", octet: 11, wantErr: "enable rescue",
			setup: func(sb *sandbox) { sb.fake.FailActions("enable_rescue", 1) }},
		{name: "poweron action", octet: 12, wantErr: "power on",
			setup: func(sb *sandbox) { sb.fake.FailActions("poweron", 1) }},
		{name: "ssh refused key", octet: 13, wantErr: "temporary key was refused",
			setup: func(sb *sandbox) { sb.hooks.wrongKey = true }},
		{name: "ssh never answers", octet: 14, wantErr: "still failing after",
			setup: func(sb *sandbox) { sb.hooks.noRescue = true }},
		{name: "download 404", octet: 15, version: "v1.13.8", wantErr: "HTTP 404"},
		{name: "download broken", octet: 16, rescue: []rescuefake.Option{rescuefake.FailAt(rescuefake.StageDownload)}, wantErr: "broke off"},
		{name: "corrupt xz", octet: 17, rescue: []rescuefake.Option{rescuefake.FailAt(rescuefake.StageDecompress)}, wantErr: "decompressing"},
		{name: "disk write", octet: 18, rescue: []rescuefake.Option{rescuefake.FailAt(rescuefake.StageWrite)}, wantErr: "writing the image to /dev/sda failed"},
		{name: "create_image action", octet: 19, wantErr: "create snapshot",
			setup: func(sb *sandbox) { sb.fake.FailActions("create_image", 1) }},
		{name: "cancel mid-write", octet: 20, rescue: []rescuefake.Option{rescuefake.StallWriteAfter(0)}, cancel: true, wantErr: "context canceled"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			sb := newSandbox(t, tc.octet, func(hcloudfake.ServerInfo) []rescuefake.Option { return tc.rescue })
			if tc.setup != nil {
				tc.setup(sb)
			}
			r := sb.request(sb.schematic("siderolabs/tailscale"), "amd64")
			if tc.version != "" {
				r.Key.TalosVersion = tc.version
				r.ImageURL = strings.Replace(r.ImageURL, testVersion, tc.version, 1)
			}
			ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
			defer cancel()
			log := &eventLog{}
			var once bool
			b := sb.builder(nil, func(o *Options) {
				o.SSHTimeout = 300 * time.Millisecond
				o.Emit = func(e Event) {
					log.add(e)
					if tc.cancel && e.Stage == StageWrite && !once {
						once = true
						time.AfterFunc(50*time.Millisecond, cancel)
					}
				}
			})
			ids, err := b.Ensure(ctx, []Request{r})
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("Ensure error = %v; want it to mention %q", err, tc.wantErr)
			}
			t.Logf("error: %v", err)
			if len(ids) != 0 {
				t.Errorf("Ensure returned snapshots %v on failure", ids)
			}
			if ev := log.of(r.Key, StageFailed); len(ev) != 1 || ev[0].Err == nil {
				t.Errorf("failed events: %+v", ev)
			}
			sb.assertNoTemporaries(t)
			if n := sb.fake.Counts()["images"]; n != 0 {
				t.Errorf("%d snapshots left after a failed build", n)
			}
		})
	}
}

func TestOneFailureDoesNotSpoilTheOthers(t *testing.T) {
	sb := newSandbox(t, 30, nil)
	id := sb.schematic("siderolabs/tailscale")
	good := sb.request(id, "arm64")
	bad := sb.request(id, "amd64")
	bad.Key.TalosVersion = "v1.99.0" // the factory has no such image: 404
	bad.ImageURL = strings.Replace(bad.ImageURL, testVersion, "v1.99.0", 1)
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()

	ids, err := sb.builder(nil).Ensure(ctx, []Request{good, bad, good})
	if err == nil || !strings.Contains(err.Error(), "HTTP 404") {
		t.Fatalf("Ensure error = %v, want the 404 of %s", err, bad.Key)
	}
	if len(ids) != 1 || ids[good.Key] == 0 {
		t.Fatalf("ids = %v, want only %s", ids, good.Key)
	}
	sb.assertNoTemporaries(t)
	if n := sb.fake.Counts()["images"]; n != 1 {
		t.Errorf("%d snapshots, want 1", n)
	}
}
