package e2e

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hetznercloud/hcloud-go/v2/hcloud"

	"github.com/ohmytalos/ohmytalos/internal/sandbox"
)

// lostResponses is a proxy in front of the fake Hetzner API that lets
// the first POST to each route through, then drops the answer and sends
// 504 timeout instead: the request took effect, the client cannot know.
// Hetzner's gateway does this under load; hcloud-go retries a 504.
type lostResponses struct {
	target *url.URL
	proxy  *httputil.ReverseProxy
	routes []*regexp.Regexp

	mu   sync.Mutex
	lost map[string]bool // route pattern -> already lost one answer
	log  []string
}

func newLostResponses(t *testing.T, hcloudURL string, routes ...string) (*lostResponses, string) {
	t.Helper()
	u, err := url.Parse(hcloudURL)
	if err != nil {
		t.Fatal(err)
	}
	// The proxy keeps the request path (/v1/...): it targets the host only.
	l := &lostResponses{target: u, proxy: httputil.NewSingleHostReverseProxy(&url.URL{Scheme: u.Scheme, Host: u.Host}), lost: map[string]bool{}}
	for _, r := range routes {
		l.routes = append(l.routes, regexp.MustCompile("^"+r+"$"))
	}
	srv := httptest.NewServer(l)
	t.Cleanup(srv.Close)
	return l, srv.URL + u.Path
}

func (l *lostResponses) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	path := strings.TrimPrefix(r.URL.Path, l.target.Path)
	if r.Method == http.MethodPost {
		for _, re := range l.routes {
			if !re.MatchString(path) {
				continue
			}
			l.mu.Lock()
			drop := !l.lost[re.String()]
			l.lost[re.String()] = true
			l.mu.Unlock()
			if !drop {
				break
			}
			rec := httptest.NewRecorder()
			l.proxy.ServeHTTP(rec, r)
			l.mu.Lock()
			l.log = append(l.log, fmt.Sprintf("POST %s answered %d, dropped", path, rec.Code))
			l.mu.Unlock()
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusGatewayTimeout)
			_, _ = io.WriteString(w, `{"error":{"code":"timeout","message":"gateway timeout (answer dropped by the e2e proxy)"}}`)
			return
		}
	}
	l.proxy.ServeHTTP(w, r)
}

// TestLostCreateResponses: when the answer to a create is lost after
// Hetzner acted on it (504, retried by hcloud-go), apply may fail, but a
// rerun must converge on exactly one of everything: no second server,
// network, snapshot or leaked temporary resource.
func TestLostCreateResponses(t *testing.T) {
	t.Parallel()
	c := newCluster(t, loadSeed(t), sandbox.HetznerLatency(0.002), 2*time.Millisecond)
	lost, endpoint := newLostResponses(t, c.sb.HCloudURL,
		"/servers", "/ssh_keys", "/networks", "/placement_groups", "/firewalls", "/load_balancers",
		`/servers/\d+/actions/create_image`, `/servers/\d+/actions/attach_to_network`, `/servers/\d+/actions/poweron`)
	c.endpoint = endpoint
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var errs []string
	done := false
	for run := 1; run <= 6 && !done; run++ {
		_, err := c.apply(ctx)
		checkNoDuplicates(t, c.sb.HCloud, fmt.Sprintf("after run %d", run))
		if err != nil {
			errs = append(errs, fmt.Sprintf("run %d: %v", run, err))
			checkFailure(t, c, err)
			continue
		}
		done = true
	}
	lost.mu.Lock()
	t.Logf("lost answers:\n  %s\nfailed runs:\n  %s", strings.Join(lost.log, "\n  "), strings.Join(errs, "\n  "))
	lost.mu.Unlock()
	if !done {
		t.Fatalf("apply did not converge after lost create answers")
	}
	want := map[string]int{"servers": 5, "networks": 1, "firewalls": 1, "load_balancers": 1, "placement_groups": 2,
		"ssh_keys": 0, "images": 2, "primary_ips": 10}
	if got := c.sb.HCloud.Counts(); !equalCounts(got, want) {
		t.Errorf("after lost answers the project holds %v, want %v", got, want)
		hc := hcloud.NewClient(hcloud.WithEndpoint(c.sb.HCloudURL), hcloud.WithToken(c.sb.Token))
		snaps, err := hc.Image.AllWithOpts(ctx, hcloud.ImageListOpts{Type: []hcloud.ImageType{hcloud.ImageTypeSnapshot}})
		if err != nil {
			t.Fatal(err)
		}
		for _, img := range snaps {
			t.Logf("snapshot %d (%s): labels %s", img.ID, img.Status, labelKey(img.Labels))
		}
	}
}
