// Package hcloudfake is a stateful, in-memory fake of the Hetzner Cloud API.
//
// It speaks the JSON of github.com/hetznercloud/hcloud-go/v2/hcloud/schema over
// HTTP, so the real hcloud-go client runs unchanged against it:
//
//	f := hcloudfake.New(hcloudfake.Options{Token: "t"})
//	srv := httptest.NewServer(f)
//	client := hcloud.NewClient(hcloud.WithEndpoint(srv.URL), hcloud.WithToken("t"))
//
// Actions progress over time and complete when a later request observes them;
// fake servers get public IPv4 addresses from 127.0.0.0/8 so that services the
// sandbox attaches to them (through Hooks) are reachable on loopback.
package hcloudfake

import (
	"fmt"
	"net"
	"sync"
	"time"

	"github.com/hetznercloud/hcloud-go/v2/hcloud/schema"
)

// Options configures a Fake.
type Options struct {
	// Token is the required bearer token; any other token gets 401 "unauthorized".
	Token string
	// ReadOnly makes the token read-only: mutating requests get 403 "forbidden".
	ReadOnly bool
	// ActionDuration is how long actions run before they finish. Zero means an
	// action finishes on the first request after the one that started it.
	ActionDuration time.Duration
	// Durations overrides ActionDuration per action command, e.g. "create_server".
	Durations map[string]time.Duration
	// RateLimit is the token-bucket capacity (default 3600, as Hetzner's hourly limit).
	RateLimit int
	// RefillEvery is the time to refill one token (default 1s).
	RefillEvery time.Duration
	// AllocateIPv4 returns the public IPv4 of a new server or load balancer. The
	// default hands out 127.0.1.1, 127.0.1.2, ... Addresses must be in 127.0.0.0/8.
	// It is called with the fake's lock held and must not call the Fake.
	AllocateIPv4 func() (string, error)
	// Hooks is told when servers power on, power off and are deleted; may be nil.
	Hooks Hooks
	// Now is the clock (default time.Now).
	Now func() time.Time
	// DiskPath returns the file that holds a server's disk; nil: disks are
	// not modelled. create_image records the file's content in the
	// snapshot, and a server created from that snapshot gets it on its
	// disk; a server created from any other image starts with an empty disk.
	DiskPath func(serverID int64) string
	// ForwardLoadBalancers makes every load balancer service listen on the
	// load balancer's public IPv4 (ListenAddr) and forward each TCP
	// connection to a healthy target; Close stops the listeners.
	ForwardLoadBalancers bool
	// LBListenPort maps a service's listen port to the port the sandbox
	// binds on the load balancer's loopback address (default
	// SandboxListenPort: unprivileged ports for 80 and 443).
	LBListenPort func(port int) int
	// FirstHealthCheck is how long after a target appears its first
	// health check result comes, given the service's check interval: a
	// target is "unknown" until then, as on Hetzner. nil is the interval
	// itself (real time); the sandbox scales it like its action durations.
	FirstHealthCheck func(interval time.Duration) time.Duration
}

// Hooks lets the sandbox attach fake Talos nodes or rescue SSH servers to fake
// servers. Hooks are called one at a time, in the order the events happened,
// without the fake's lock held, before the response to the request (often an
// action poll) that caused them is written. They may call the Fake's
// inspection methods but must not wait for API requests to the same Fake:
// start such work in a goroutine.
type Hooks interface {
	// ServerPoweredOn is called when a server boots: when its create action
	// finishes (with start_after_create), and after poweron, reset and reboot.
	ServerPoweredOn(s ServerInfo)
	// ServerPoweredOff is called after poweroff and shutdown, and before delete.
	ServerPoweredOff(id int64)
	// ServerDeleted is called when a server is deleted.
	ServerDeleted(id int64)
}

// ServerInfo describes a fake server as the sandbox needs it.
type ServerInfo struct {
	ID         int64
	Name       string
	PublicIPv4 string
	// PublicIPv6 is the server's address in its public /64, the first one
	// (…::1), as Hetzner configures it; "" without IPv6.
	PublicIPv6 string
	// PrivateIPs holds one IP per attached network, in attach order.
	PrivateIPs []string
	// PrivateRanges holds the ip_range of each attached network, in the
	// same order: Hetzner's DHCP routes it via the network's gateway.
	PrivateRanges []string
	UserData      string
	// Rescue reports whether this boot is into the rescue system.
	Rescue bool
	// RescueSSHKeys are the authorized public keys (OpenSSH format) of the rescue system.
	RescueSSHKeys []string
	ImageID       int64
	// ImageType and ImageLabels describe the image the server was created
	// from ("system", "snapshot", ...), as GET /images/{id} would.
	ImageType   string
	ImageLabels map[string]string
	Labels      map[string]string
	ServerType  string
	Location    string
}

// Stats counts the requests a Fake has served.
type Stats struct {
	// Requests is the number of requests received.
	Requests int
	// ByRoute counts requests per "METHOD /path/{id}/template".
	ByRoute map[string]int
	// ByAgent counts requests per client application (the first product
	// of the User-Agent header hcloud-go sends, e.g. "ohmytalos" or
	// "hcloud-cloud-controller-manager"; "" when there is none), then
	// per route: it tells the product's requests from the sandbox's own
	// controllers'.
	ByAgent map[string]map[string]int
	// RateLimited counts 429 responses (real or injected).
	RateLimited int
	// ServerErrors counts 5xx responses (injected).
	ServerErrors int
}

// Fake is the in-memory Hetzner Cloud API. It is an http.Handler mounted at
// the API root and is safe for concurrent use.
type Fake struct {
	opts Options
	cat  *catalog

	hookMu    sync.Mutex // serializes hook delivery; taken before mu, never inside it
	mu        sync.Mutex
	lastID    int64
	reqSeq    int64
	ipSeq     int
	bucket    tokenBucket
	stats     Stats
	hookQueue []func(Hooks)

	servers    map[int64]*serverState
	networks   map[int64]*networkState
	firewalls  map[int64]*schema.Firewall
	lbs        map[int64]*schema.LoadBalancer
	pgroups    map[int64]*schema.PlacementGroup
	sshKeys    map[int64]*schema.SSHKey
	images     map[int64]*schema.Image
	volumes    map[int64]*schema.Volume
	primaryIPs map[int64]*schema.PrimaryIP
	actions    map[int64]*action

	injections  []*injection
	failActions map[string]int
	unavailable map[[2]string]bool
	withdrawn   []withdrawal
	limits      map[string]int
	probes      map[string]probe     // health probe results by host:port
	imageDisks  map[int64][]byte     // what each snapshot's source disk held
	targetAdded map[string]time.Time // when each load balancer target was added
	latency     map[string]time.Duration
	forwarders  map[string]*forwarder // "lbID/listenPort" -> its listener
	rr          map[string]int        // round-robin position per forwarder
}

type injection struct {
	method, prefix string
	status, count  int
}

// New returns a Fake seeded with the catalog (server types, locations,
// datacenters, load balancer types, system images) and no project resources.
func New(opts Options) *Fake {
	if opts.RateLimit <= 0 {
		opts.RateLimit = 3600
	}
	if opts.RefillEvery <= 0 {
		opts.RefillEvery = time.Second
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	f := &Fake{
		opts:        opts,
		cat:         newCatalog(),
		lastID:      1000,
		servers:     map[int64]*serverState{},
		networks:    map[int64]*networkState{},
		firewalls:   map[int64]*schema.Firewall{},
		lbs:         map[int64]*schema.LoadBalancer{},
		pgroups:     map[int64]*schema.PlacementGroup{},
		sshKeys:     map[int64]*schema.SSHKey{},
		images:      map[int64]*schema.Image{},
		volumes:     map[int64]*schema.Volume{},
		primaryIPs:  map[int64]*schema.PrimaryIP{},
		actions:     map[int64]*action{},
		failActions: map[string]int{},
		unavailable: map[[2]string]bool{},
		limits:      map[string]int{},
		probes:      map[string]probe{},
		imageDisks:  map[int64][]byte{},
		targetAdded: map[string]time.Time{},
		latency:     map[string]time.Duration{},
		forwarders:  map[string]*forwarder{},
		rr:          map[string]int{},
		stats:       Stats{ByRoute: map[string]int{}, ByAgent: map[string]map[string]int{}},
	}
	f.bucket = newTokenBucket(opts.RateLimit, opts.RefillEvery, opts.Now())
	for _, img := range f.cat.systemImages(opts.Now()) {
		f.images[img.ID] = img
	}
	return f
}

// nextID returns a fresh resource ID; callers hold f.mu.
func (f *Fake) nextID() int64 {
	f.lastID++
	return f.lastID
}

// allocateIPv4 returns a public loopback IPv4; callers hold f.mu.
func (f *Fake) allocateIPv4() (string, error) {
	if f.opts.AllocateIPv4 != nil {
		ip, err := f.opts.AllocateIPv4()
		if err != nil {
			return "", fmt.Errorf("allocate public ipv4: %w", err)
		}
		parsed := net.ParseIP(ip)
		if parsed == nil || parsed.To4() == nil || parsed.To4()[0] != 127 {
			return "", fmt.Errorf("allocate public ipv4: %q is not in 127.0.0.0/8; the sandbox must stay on loopback", ip)
		}
		return ip, nil
	}
	f.ipSeq++
	idx := f.ipSeq - 1
	b, c, d := idx/(254*254), 1+(idx/254)%254, 1+idx%254
	if b > 254 {
		return "", fmt.Errorf("allocate public ipv4: loopback pool 127.0.1.1-127.254.254.254 exhausted after %d addresses", idx)
	}
	return fmt.Sprintf("127.%d.%d.%d", b, c, d), nil
}
