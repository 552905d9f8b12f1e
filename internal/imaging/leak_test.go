package imaging

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hetznercloud/hcloud-go/v2/hcloud"
)

// A run killed after publishing the snapshot, before its cleanup: the
// next run reuses the snapshot and removes that key's leftovers (and only
// that key's).
func TestReuseRemovesLeftoversOfAKilledCleanup(t *testing.T) {
	sb := newSandbox(t, 40, nil)
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	r := sb.request(sb.schematic("siderolabs/tailscale"), "amd64")
	ids, err := sb.builder(nil).Ensure(ctx, []Request{r})
	if err != nil {
		t.Fatalf("cold Ensure: %v", err)
	}

	b := sb.builder(nil)
	plantServer(t, sb, "killed-cleanup", b.temporaryLabels(r.Key))
	_, pub, err := newSSHKey()
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := sb.client.SSHKey.Create(ctx, hcloud.SSHKeyCreateOpts{Name: "killed-cleanup", PublicKey: pub, Labels: b.temporaryLabels(r.Key)}); err != nil {
		t.Fatal(err)
	}
	other := Key{SchematicID: strings.Repeat("cd", 32), TalosVersion: testVersion, Arch: "arm64"}
	live := plantServer(t, sb, "other-key-build", b.temporaryLabels(other))

	log := &eventLog{}
	again, err := sb.builder(log).Ensure(ctx, []Request{r})
	if err != nil || again[r.Key] != ids[r.Key] {
		t.Fatalf("warm Ensure = %v, %v; want snapshot %d reused", again, err, ids[r.Key])
	}
	if ev := log.of(r.Key, StageReused); len(ev) != 1 {
		t.Errorf("reused events: %+v", ev)
	}
	cleanup := log.of(r.Key, StageCleanup)
	if len(cleanup) != 1 || cleanup[0].Err != nil || !strings.Contains(cleanup[0].Message, "server killed-cleanup, ssh key killed-cleanup") {
		t.Errorf("cleanup events: %+v", cleanup)
	}
	servers := sb.fake.Servers()
	if len(servers) != 1 || servers[0].ID != live.ID {
		t.Errorf("servers after the reuse: %+v; want only the other key's build", servers)
	}
	if n := sb.fake.Counts()["ssh_keys"]; n != 0 {
		t.Errorf("%d ssh keys left", n)
	}
}

// A failed cleanup after the snapshot was published is a warning; the
// next run removes what it left.
func TestCleanupFailureIsAWarning(t *testing.T) {
	sb := newSandbox(t, 41, nil)
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	r := sb.request(sb.schematic("siderolabs/tailscale"), "amd64")
	sb.fake.FailActions("delete_server", 1)
	sb.fake.InjectStatus(http.MethodDelete, "/ssh_keys", http.StatusInternalServerError, 1)

	log := &eventLog{}
	ids, err := sb.builder(log).Ensure(ctx, []Request{r})
	if err != nil || ids[r.Key] == 0 {
		t.Fatalf("Ensure = %v, %v; want the published snapshot despite the failed cleanup", ids, err)
	}
	if ev := log.of(r.Key, StageDone); len(ev) != 1 || ev[0].SnapshotID != ids[r.Key] {
		t.Errorf("done events: %+v", ev)
	}
	if ev := log.of(r.Key, StageFailed); len(ev) != 0 {
		t.Errorf("failed events: %+v", ev)
	}
	var warned bool
	for _, e := range log.of(r.Key, StageCleanup) {
		warned = warned || (e.Err != nil && strings.Contains(e.Err.Error(), "delete temporary ssh key"))
	}
	if !warned {
		t.Errorf("no cleanup warning naming the ssh key: %+v", log.of(r.Key, StageCleanup))
	}
	if n := sb.fake.Counts()["ssh_keys"]; n != 1 {
		t.Fatalf("%d ssh keys after the failed delete, want the one left", n)
	}

	// The leftover still holds the failed build's lease: a run within it
	// keeps it, a run after it has run out removes it.
	if _, err := sb.builder(nil).Ensure(ctx, []Request{r}); err != nil {
		t.Fatalf("warm Ensure: %v", err)
	}
	if n := sb.fake.Counts()["ssh_keys"]; n != 1 {
		t.Fatalf("%d ssh keys after a run within the lease, want the leased one kept", n)
	}
	later := func(o *Options) {
		o.Now = func() time.Time { return time.Now().Add(defaultLeaseDuration + time.Minute) }
	}
	if _, err := sb.builder(nil, later).Ensure(ctx, []Request{r}); err != nil {
		t.Fatalf("warm Ensure after the lease: %v", err)
	}
	sb.assertNoTemporaries(t)
}

// lostAnswers forwards to the fake API but, for the first POST to each
// route, drops the answer and sends 504: the API acted, the client
// retries (hcloud-go retries 504) without knowing.
type lostAnswers struct {
	next   http.Handler
	routes []*regexp.Regexp
	mu     sync.Mutex
	lost   []string
}

func (l *lostAnswers) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method == http.MethodPost {
		for _, re := range l.routes {
			if !re.MatchString(r.URL.Path) {
				continue
			}
			l.mu.Lock()
			drop := !slices.Contains(l.lost, re.String())
			if drop {
				l.lost = append(l.lost, re.String())
			}
			l.mu.Unlock()
			if drop {
				l.next.ServeHTTP(httptest.NewRecorder(), r)
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(http.StatusGatewayTimeout)
				_, _ = io.WriteString(w, `{"error":{"code":"timeout","message":"answer dropped by the test"}}`)
				return
			}
			break
		}
	}
	l.next.ServeHTTP(w, r)
}

// Lost answers to the creates of the key, the server and the snapshot,
// and to power and rescue actions: the build adopts what it made, and
// exactly one snapshot and no temporary resource remain.
func TestLostAnswersAreAdopted(t *testing.T) {
	sb := newSandbox(t, 42, nil)
	routes := []string{`/ssh_keys`, `/servers`, `/servers/\d+/actions/enable_rescue`, `/servers/\d+/actions/poweron`,
		`/servers/\d+/actions/create_image`}
	l := &lostAnswers{next: sb.fake}
	for _, r := range routes {
		l.routes = append(l.routes, regexp.MustCompile("^"+r+"$"))
	}
	proxy := httptest.NewServer(l)
	t.Cleanup(proxy.Close)
	c := hcloud.NewClient(hcloud.WithEndpoint(proxy.URL), hcloud.WithToken("test-token"),
		hcloud.WithRetryOpts(hcloud.RetryOpts{BackoffFunc: hcloud.ConstantBackoff(time.Millisecond), MaxRetries: 3}))
	b := sb.builder(nil)
	b = New(c, b.opts)

	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	r := sb.request(sb.schematic("siderolabs/tailscale"), "amd64")
	ids, err := b.Ensure(ctx, []Request{r})
	if err != nil || ids[r.Key] == 0 {
		t.Fatalf("Ensure = %v, %v", ids, err)
	}
	l.mu.Lock()
	if len(l.lost) != len(routes) {
		t.Errorf("answers lost on %v, want every route of %v", l.lost, routes)
	}
	l.mu.Unlock()
	sb.assertNoTemporaries(t)
	if n := sb.fake.Counts()["images"]; n != 1 {
		imgs, _ := sb.client.Image.AllWithOpts(ctx, hcloud.ImageListOpts{Type: []hcloud.ImageType{hcloud.ImageTypeSnapshot}})
		var desc []string
		for _, img := range imgs {
			desc = append(desc, fmt.Sprintf("%d %v", img.ID, img.Labels))
		}
		t.Errorf("%d snapshots, want 1: %v", n, desc)
	}
}
