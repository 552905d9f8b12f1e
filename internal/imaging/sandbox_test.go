package imaging

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hetznercloud/hcloud-go/v2/hcloud"

	"github.com/ohmytalos/ohmytalos/internal/sandbox/factoryfake"
	"github.com/ohmytalos/ohmytalos/internal/sandbox/hcloudfake"
	"github.com/ohmytalos/ohmytalos/internal/sandbox/rescuefake"
)

// This package's tests give fake servers addresses in 127.62.0.0/16 (the
// third octet per test), away from the fakes' default 127.0.1.x.

const testVersion = "v1.13.9"

// sandbox wires the fake Hetzner API, the fake Image Factory and a rescue
// SSH fake per server booted into rescue.
type sandbox struct {
	t       *testing.T
	fake    *hcloudfake.Fake
	client  *hcloud.Client
	factory string // base URL
	hooks   *rescueHooks
	port    int
}

// rescueHooks starts a rescuefake when a fake server boots into rescue and
// stops it when the server powers off or is deleted.
type rescueHooks struct {
	t     *testing.T
	port  int
	dir   string
	hc    *http.Client
	opts  func(hcloudfake.ServerInfo) []rescuefake.Option
	mu    sync.Mutex
	live  map[int64]*rescuefake.Server
	boots []bootRecord
	// noRescue leaves rescue boots without SSH; wrongKey authorises another key.
	noRescue, wrongKey bool
}

// bootRecord is what one rescue boot saw.
type bootRecord struct {
	info     hcloudfake.ServerInfo
	disk     string
	srv      *rescuefake.Server
	startErr error
}

func (h *rescueHooks) ServerPoweredOn(info hcloudfake.ServerInfo) {
	if !info.Rescue || h.noRescue {
		return
	}
	keys := info.RescueSSHKeys
	if h.wrongKey {
		_, other, err := newSSHKey()
		if err != nil {
			h.t.Error(err)
			return
		}
		keys = []string{other}
	}
	var opts []rescuefake.Option
	if h.opts != nil {
		opts = h.opts(info)
	}
	if strings.HasPrefix(info.ServerType, "cax") {
		opts = append(opts, rescuefake.Machine("aarch64"))
	}
	disk := filepath.Join(h.dir, fmt.Sprintf("sda-%d", info.ID))
	srv, err := rescuefake.Start(context.Background(), net.JoinHostPort(info.PublicIPv4, strconv.Itoa(h.port)), keys, disk, h.hc, opts...)
	h.mu.Lock()
	defer h.mu.Unlock()
	h.boots = append(h.boots, bootRecord{info: info, disk: disk, srv: srv, startErr: err})
	if err == nil {
		h.live[info.ID] = srv
	}
}

func (h *rescueHooks) stop(id int64) {
	h.mu.Lock()
	srv := h.live[id]
	delete(h.live, id)
	h.mu.Unlock()
	if srv != nil {
		_ = srv.Close()
	}
}

func (h *rescueHooks) ServerPoweredOff(id int64) { h.stop(id) }
func (h *rescueHooks) ServerDeleted(id int64)    { h.stop(id) }

func (h *rescueHooks) records() []bootRecord {
	h.mu.Lock()
	defer h.mu.Unlock()
	return slices.Clone(h.boots)
}

func (h *rescueHooks) liveCount() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.live)
}

// newSandbox starts the fakes; octet picks the 127.62.octet.0/24 range.
func newSandbox(t *testing.T, octet int, opts func(hcloudfake.ServerInfo) []rescuefake.Option) *sandbox {
	t.Helper()
	if _, err := exec.LookPath("xz"); err != nil {
		t.Skip("xz is not installed; the rescue fake decompresses with it")
	}
	ff := httptest.NewServer(factoryfake.New())
	t.Cleanup(ff.Close)

	// One port for every fake server of this test, free on the first address.
	ln, err := net.Listen("tcp", fmt.Sprintf("127.62.%d.1:0", octet))
	if err != nil {
		t.Fatalf("loopback 127.62.%d.1 unavailable: %v", octet, err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	_ = ln.Close()

	hooks := &rescueHooks{t: t, port: port, dir: t.TempDir(), hc: ff.Client(), opts: opts,
		live: map[int64]*rescuefake.Server{}}
	var ipMu sync.Mutex
	next := 0
	fake := hcloudfake.New(hcloudfake.Options{
		Token:          "test-token",
		ActionDuration: 5 * time.Millisecond,
		Hooks:          hooks,
		AllocateIPv4: func() (string, error) {
			ipMu.Lock()
			defer ipMu.Unlock()
			next++
			return fmt.Sprintf("127.62.%d.%d", octet, next), nil
		},
	})
	api := httptest.NewServer(fake)
	t.Cleanup(api.Close)
	t.Cleanup(func() {
		for _, r := range hooks.records() {
			if r.srv != nil {
				_ = r.srv.Close()
			}
		}
	})
	client := hcloud.NewClient(hcloud.WithEndpoint(api.URL), hcloud.WithToken("test-token"),
		hcloud.WithPollOpts(hcloud.PollOpts{BackoffFunc: hcloud.ConstantBackoff(5 * time.Millisecond)}))
	return &sandbox{t: t, fake: fake, client: client, factory: ff.URL, hooks: hooks, port: port}
}

// schematic registers a schematic with the fake factory and returns its ID.
func (s *sandbox) schematic(extensions ...string) string {
	s.t.Helper()
	body := "customization:\n  systemExtensions:\n    officialExtensions:\n"
	for _, e := range extensions {
		body += "      - " + e + "\n"
	}
	resp, err := http.Post(s.factory+"/schematics", "application/yaml", strings.NewReader(body))
	if err != nil {
		s.t.Fatal(err)
	}
	defer func() { _ = resp.Body.Close() }()
	var out struct{ ID string }
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil || resp.StatusCode != http.StatusCreated {
		s.t.Fatalf("register schematic: status %d, err %v", resp.StatusCode, err)
	}
	return out.ID
}

func (s *sandbox) request(id, arch string) Request {
	return Request{
		Key:      Key{SchematicID: id, TalosVersion: testVersion, Arch: arch},
		ImageURL: fmt.Sprintf("%s/image/%s/%s/hcloud-%s.raw.xz", s.factory, id, testVersion, arch),
		Location: "fsn1",
	}
}

// eventLog collects events for assertions.
type eventLog struct {
	mu     sync.Mutex
	events []Event
}

func (l *eventLog) add(e Event) {
	l.mu.Lock()
	l.events = append(l.events, e)
	l.mu.Unlock()
}

func (l *eventLog) of(k Key, stage string) []Event {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []Event
	for _, e := range l.events {
		if e.Key == k && e.Stage == stage {
			out = append(out, e)
		}
	}
	return out
}

func (s *sandbox) builder(log *eventLog, mod ...func(*Options)) *Builder {
	opts := Options{
		SSHPort:      s.port,
		SSHTimeout:   5 * time.Second,
		PollInterval: 10 * time.Millisecond,
		Labels:       map[string]string{"created-by": "ohmytalos-test"},
	}
	if log != nil {
		opts.Emit = log.add
	}
	for _, m := range mod {
		m(&opts)
	}
	return New(s.client, opts)
}

// assertNoTemporaries checks that no server, SSH key, unfinished snapshot
// or running rescue system is left.
func (s *sandbox) assertNoTemporaries(t *testing.T) {
	t.Helper()
	if srv := s.fake.Servers(); len(srv) != 0 {
		t.Errorf("%d servers left: %+v", len(srv), srv)
	}
	if n := s.fake.Counts()["ssh_keys"]; n != 0 {
		t.Errorf("%d ssh keys left", n)
	}
	imgs, err := s.client.Image.AllWithOpts(context.Background(), hcloud.ImageListOpts{
		ListOpts: hcloud.ListOpts{LabelSelector: LabelTemporary}, Type: []hcloud.ImageType{hcloud.ImageTypeSnapshot}})
	if err != nil {
		t.Fatal(err)
	}
	if len(imgs) != 0 {
		t.Errorf("%d unfinished snapshots left", len(imgs))
	}
	if n := s.hooks.liveCount(); n != 0 {
		t.Errorf("%d rescue systems still running", n)
	}
}
