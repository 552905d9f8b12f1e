// Package cloud is the narrow layer over hcloud-go that steps use: client
// construction (honouring HCLOUD_ENDPOINT like hcloud-go and the hcloud
// CLI), the labels that mark what ohmytalos owns, lookups that refuse
// ambiguity, and a request meter that reads Hetzner's rate-limit headers.
package cloud

import (
	"fmt"
	"net/http"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hetznercloud/hcloud-go/v2/hcloud"
)

// Labels that mark ohmytalos' resources.
const (
	LabelCluster   = "ohmytalos.io/cluster"
	LabelClusterID = "ohmytalos.io/cluster-id" // the cluster's random ID: its identity, not its name
	LabelManagedBy = "ohmytalos.io/managed-by"
	LabelRole      = "ohmytalos.io/role"
	LabelPool      = "ohmytalos.io/pool"
	LabelIngress   = "ohmytalos.io/ingress"
	LabelNode      = "ohmytalos.io/node"
	ManagedBy      = "ohmytalos"
)

// ClusterLabels returns the labels of a cluster resource with a role.
func ClusterLabels(cluster, role string, extra map[string]string) map[string]string {
	l := map[string]string{LabelCluster: cluster, LabelManagedBy: ManagedBy, LabelRole: role}
	for k, v := range extra {
		l[k] = v
	}
	return l
}

// WithClusterID returns a copy of labels with the cluster ID label set
// (labels unchanged when id is "": a state from before cluster IDs).
func WithClusterID(labels map[string]string, id string) map[string]string {
	out := make(map[string]string, len(labels)+1)
	for k, v := range labels {
		out[k] = v
	}
	if id != "" {
		out[LabelClusterID] = id
	}
	return out
}

// WithoutClusterID returns a copy of labels without the cluster ID label:
// lookups select by name and role, then tell owners apart by the ID.
func WithoutClusterID(labels map[string]string) map[string]string {
	out := make(map[string]string, len(labels))
	for k, v := range labels {
		if k != LabelClusterID {
			out[k] = v
		}
	}
	return out
}

// Selector renders labels as a Hetzner label selector (k=v,k=v, sorted).
func Selector(labels map[string]string) string {
	keys := make([]string, 0, len(labels))
	for k := range labels {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = k + "=" + labels[k]
	}
	return strings.Join(parts, ",")
}

// ClusterSelector selects every resource of a cluster.
func ClusterSelector(cluster string) string {
	return Selector(map[string]string{LabelCluster: cluster, LabelManagedBy: ManagedBy})
}

// One returns the single match, nothing when there is none, and an error
// naming the duplicates when there are two or more: ohmytalos never guesses.
func One[T any](items []T, kind, selector string, name func(T) string) (T, bool, error) {
	var zero T
	switch len(items) {
	case 0:
		return zero, false, nil
	case 1:
		return items[0], true, nil
	}
	names := make([]string, len(items))
	for i, it := range items {
		names[i] = name(it)
	}
	return zero, false, fmt.Errorf("%d %ss match %q (%s): ohmytalos will not guess; delete the extra ones or fix their labels",
		len(items), kind, selector, strings.Join(names, ", "))
}

// Meter counts API requests and remembers the last rate-limit headers.
type Meter struct {
	next      http.RoundTripper
	requests  atomic.Int64
	mu        sync.Mutex
	remaining int
	limit     int
	seen      bool
}

// NewMeter wraps a transport (nil = http.DefaultTransport).
func NewMeter(next http.RoundTripper) *Meter {
	if next == nil {
		next = http.DefaultTransport
	}
	return &Meter{next: next}
}

// RoundTrip implements http.RoundTripper.
func (m *Meter) RoundTrip(r *http.Request) (*http.Response, error) {
	m.requests.Add(1)
	resp, err := m.next.RoundTrip(r)
	if err == nil {
		if v, e := strconv.Atoi(resp.Header.Get("RateLimit-Remaining")); e == nil {
			m.mu.Lock()
			m.remaining, m.seen = v, true
			if l, e := strconv.Atoi(resp.Header.Get("RateLimit-Limit")); e == nil {
				m.limit = l
			}
			m.mu.Unlock()
		}
	}
	return resp, err
}

// Requests is how many requests went out.
func (m *Meter) Requests() int64 { return m.requests.Load() }

// RateLimit returns the last remaining/limit seen; ok is false before any.
func (m *Meter) RateLimit() (remaining, limit int, ok bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.remaining, m.limit, m.seen
}

// Endpoint returns the API endpoint: explicit, else $HCLOUD_ENDPOINT, else
// Hetzner's.
func Endpoint(explicit string) string {
	if explicit != "" {
		return explicit
	}
	if e := os.Getenv("HCLOUD_ENDPOINT"); e != "" {
		return e
	}
	return hcloud.Endpoint
}

// Options configure NewClient.
type Options struct {
	Endpoint     string        // "" = $HCLOUD_ENDPOINT or Hetzner
	Version      string        // ohmytalos version for the user agent
	PollInterval time.Duration // action polling (default 500ms)
	Meter        *Meter
	// StopOnRateLimit makes the first 429 fail its request with a
	// *RateLimitedError instead of being retried (for plan).
	StopOnRateLimit bool
}

// NewClient returns an hcloud-go client for token.
func NewClient(token string, o Options) *hcloud.Client {
	opts := []hcloud.ClientOption{
		hcloud.WithToken(token),
		hcloud.WithEndpoint(Endpoint(o.Endpoint)),
		hcloud.WithApplication("ohmytalos", o.Version),
		hcloud.WithPollOpts(hcloud.PollOpts{BackoffFunc: Backoff(o.PollInterval)}),
	}
	var rt http.RoundTripper
	if o.Meter != nil {
		rt = o.Meter
	}
	if o.StopOnRateLimit {
		if rt == nil {
			rt = http.DefaultTransport
		}
		rt = stopOnRateLimit{next: rt}
	}
	if rt != nil {
		opts = append(opts, hcloud.WithHTTPClient(&http.Client{Transport: rt, Timeout: 60 * time.Second}))
	}
	return hcloud.NewClient(opts...)
}

// IsNotFound reports a Hetzner not_found error.
func IsNotFound(err error) bool { return hcloud.IsError(err, hcloud.ErrorCodeNotFound) }
