// Package sandbox runs the fakes of everything outside (Hetzner Cloud, the
// Talos nodes, their rescue systems, the Image Factory) together, so the
// real clients run unchanged against them: in-process for --sandbox and
// tests, or standalone with "ohmytalos sandbox serve". Nothing it shows
// exists on Hetzner.
package sandbox

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/ohmytalos/ohmytalos/internal/sandbox/bwfake"
	"github.com/ohmytalos/ohmytalos/internal/sandbox/chartrepo"
	"github.com/ohmytalos/ohmytalos/internal/sandbox/factoryfake"
	"github.com/ohmytalos/ohmytalos/internal/sandbox/hcloudfake"
	"github.com/ohmytalos/ohmytalos/internal/sandbox/kubereal"
	"github.com/ohmytalos/ohmytalos/internal/sandbox/kubereal/kubebin"
	"github.com/ohmytalos/ohmytalos/internal/sandbox/rescuefake"
	"github.com/ohmytalos/ohmytalos/internal/sandbox/talosfake"
)

// Options configure a sandbox. Zero values give a snappy interactive demo.
type Options struct {
	Addr           string                   // HTTP listen address (default 127.0.0.1:0)
	Token          string                   // Hetzner token to accept (default: random, 64 characters like Hetzner's)
	ReadOnly       bool                     // the token is read-only
	ActionDuration time.Duration            // default duration of Hetzner actions
	Durations      map[string]time.Duration // per action command
	BootDelay      time.Duration            // Talos API comes up this long after power on
	RescueSSHPort  int                      // rescue systems listen here (default 2222; Hetzner's is 22)
	Latency        time.Duration            // added to every Hetzner API request
	RateLimit      int                      // Hetzner API requests per hour (default 3600, refilled one a second)
	WorkDir        string                   // fake disks (default: a temp dir removed on Close)
	Log            *slog.Logger
	// WrapHCloud wraps the Hetzner fake's HTTP handler (paths relative to
	// /v1), e.g. for a test to record every exchange; nil serves it as is.
	WrapHCloud func(http.Handler) http.Handler
	// HCloudNow is the Hetzner fake's clock (default time.Now): a test
	// moves it past a load balancer's first health check interval.
	HCloudNow func() time.Time
	// Progress receives the real control plane's build progress lines;
	// nil sends them to Log only.
	Progress func(string)
	// ImagePullDelay is how long a node's kubelet takes to pull an image,
	// once per node (the real control plane's kubelets); nil pulls at once.
	ImagePullDelay func(image string) time.Duration
	// HealthCheckScale scales load balancer health checks like the action
	// durations: a new target's first result ("unknown" until then) comes
	// after its service's check interval (Hetzner's default 15 s) times
	// this. 0 gives it at once; 1 is real time (HetznerLatency sets it to
	// its scale).
	HealthCheckScale float64
	// PodStart is how long a simulated kubelet takes to start a pod's
	// containers once its images are on the node, until it is Running and
	// Ready (default 500ms).
	PodStart time.Duration
	// KubeletSync and CloudSync are how often the simulated kubelets, and
	// the simulated cloud controller and cilium operator, look at the API
	// server (defaults 500ms and 1s); a kubelet also wakes when a
	// modelled wait ends.
	KubeletSync, CloudSync time.Duration
}

// kubeTiming is talosfake's KubeTiming from o.
func (o Options) kubeTiming() kubereal.Timing {
	return kubereal.Timing{PodStart: o.PodStart, KubeletSync: o.KubeletSync, CloudSync: o.CloudSync}
}

// DefaultRescueSSHPort is where rescue systems listen in the sandbox.
const DefaultRescueSSHPort = 2222

// Sandbox is a running set of fakes.
type Sandbox struct {
	HCloud  *hcloudfake.Fake
	Factory *factoryfake.Fake
	Talos   *talosfake.Cluster
	// BW is a `bw serve` (Vaultwarden/Bitwarden Vault Management API)
	// holding one item, BWItemID, whose password is Token.
	BW *bwfake.Fake

	// BWServeURL and BWItemID are what a bw secret reference needs.
	BWServeURL, BWItemID string

	// HCloudURL, FactoryURL, IPEchoURL and Token are what clients need.
	HCloudURL, FactoryURL, IPEchoURL, Token string
	// Charts serves the Helm chart repositories the add-ons come from,
	// with stand-in charts (chartrepo), under ChartsURL: an upstream
	// repository https://HOST/PATH is ChartsURL+"/HOST/PATH" (the mirror
	// rule of OHMYTALOS_CHART_MIRROR).
	Charts        *chartrepo.Server
	ChartsURL     string
	RescueSSHPort int
	// Kube is the build of the real control plane's binaries, running in
	// the background from Start (kubebin.Start): its Status says how far
	// along it is, Wait when it is over. Close stops it.
	Kube *kubebin.Build

	opts    Options
	log     *slog.Logger
	srv     *http.Server
	ln      net.Listener
	ctx     context.Context
	cancel  context.CancelFunc
	tmpDir  string
	mu      sync.Mutex
	rescue  map[int64]*rescuefake.Server
	nodes   map[int64]bool
	usedIPs map[string]bool
}

// Start starts the fakes and serves them over HTTP on loopback.
func Start(ctx context.Context, o Options) (*Sandbox, error) {
	if o.Addr == "" {
		o.Addr = "127.0.0.1:0"
	}
	if o.Token == "" {
		o.Token = randomToken()
	}
	if o.RescueSSHPort == 0 {
		o.RescueSSHPort = DefaultRescueSSHPort
	}
	if o.Log == nil {
		o.Log = slog.New(slog.NewTextHandler(nopWriter{}, nil))
	}
	s := &Sandbox{opts: o, log: o.Log, Token: o.Token, RescueSSHPort: o.RescueSSHPort,
		rescue: map[int64]*rescuefake.Server{}, nodes: map[int64]bool{}, usedIPs: map[string]bool{}}
	s.ctx, s.cancel = context.WithCancel(context.Background())
	if o.WorkDir == "" {
		d, err := os.MkdirTemp("", "ohmytalos-sandbox-")
		if err != nil {
			return nil, fmt.Errorf("sandbox work dir: %w", err)
		}
		s.tmpDir, o.WorkDir = d, d
		s.opts.WorkDir = d
	}
	// Packaged in the background: off the wizard's first frame.
	s.Charts = chartrepo.Start()
	ln, err := net.Listen("tcp", o.Addr)
	if err != nil {
		s.Close()
		return nil, fmt.Errorf("sandbox listen on %s: %w", o.Addr, err)
	}
	s.ln = ln
	base := "http://" + ln.Addr().String()
	s.HCloudURL, s.FactoryURL, s.IPEchoURL, s.ChartsURL = base+"/v1", base+"/factory", base+"/ip", base+"/charts"
	s.Factory = factoryfake.New()
	s.HCloud = hcloudfake.New(hcloudfake.Options{
		Token: o.Token, ReadOnly: o.ReadOnly, ActionDuration: o.ActionDuration, Durations: o.Durations,
		AllocateIPv4: s.allocateIP, Hooks: hooks{s}, DiskPath: s.diskPath, RateLimit: o.RateLimit,
		// Load balancers serve on their loopback IPv4 (80 on 8080, 443 on
		// 8443: hcloudfake.SandboxListenPort) and forward to healthy targets.
		ForwardLoadBalancers: true, Now: o.HCloudNow, FirstHealthCheck: o.scaledHealthCheck,
	})
	co := talosfake.ClusterOptions{HCloudEndpoint: s.HCloudURL, Admit: s.HCloud.FirewallAdmits, Registries: []string{ln.Addr().String()}}
	co.KubeTiming = o.kubeTiming()
	// Each cluster's Kubernetes API is the real kube-apiserver, etcd,
	// kube-controller-manager and kube-scheduler, built from source on
	// first use (docs/sandbox.md), in the background: everything but a
	// cluster's Kubernetes API works meanwhile, and a control plane
	// starts once the build is over.
	s.Kube = kubebin.Start(s.ctx, kubebin.Options{Progress: s.progress})
	co.RealKubernetes, co.RealKubernetesDir, co.Logger, co.ImagePullDelay = s.Kube.Wait, o.WorkDir, o.Log, o.ImagePullDelay
	s.Talos = talosfake.NewCluster(co)
	if o.Latency > 0 {
		s.HCloud.SetLatency("/", o.Latency)
	}
	s.BWItemID, s.BWServeURL = bwfake.NewID(), base+"/bw"
	s.BW = bwfake.New(bwfake.Options{Items: []bwfake.Item{{ID: s.BWItemID, Name: BWItemName, Password: o.Token}}})
	mux := http.NewServeMux()
	var hc http.Handler = s.HCloud
	if o.WrapHCloud != nil {
		hc = o.WrapHCloud(hc)
	}
	mux.Handle("/v1/", http.StripPrefix("/v1", hc))
	mux.Handle("/factory/", http.StripPrefix("/factory", s.Factory))
	mux.Handle("/bw/", http.StripPrefix("/bw", s.BW))
	mux.Handle("/charts/", http.StripPrefix("/charts", s.Charts))
	mux.HandleFunc("GET /ip", echoIP)
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "ohmytalos sandbox: Hetzner API under /v1, Image Factory under /factory, bw serve under /bw, Helm chart repositories under /charts, IP echo at /ip", http.StatusNotFound)
	})
	s.srv = &http.Server{Handler: markSandbox(mux), ReadHeaderTimeout: 10 * time.Second, ErrorLog: slog.NewLogLogger(s.log.Handler(), slog.LevelDebug)}
	go func() { _ = s.srv.Serve(ln) }()
	return s, nil
}

// scaledHealthCheck is hcloudfake's FirstHealthCheck under
// Options.HealthCheckScale.
func (o Options) scaledHealthCheck(interval time.Duration) time.Duration {
	return time.Duration(float64(interval) * max(o.HealthCheckScale, 0))
}

// progress reports a build step of the real control plane.
func (s *Sandbox) progress(line string) {
	s.log.Info(line)
	if s.opts.Progress != nil {
		s.opts.Progress(line)
	}
}

// Env returns the environment clients need, as NAME=value pairs.
func (s *Sandbox) Env() []string {
	return []string{
		"HCLOUD_ENDPOINT=" + s.HCloudURL,
		"HCLOUD_TOKEN=" + s.Token,
		"OHMYTALOS_FACTORY_URL=" + s.FactoryURL,
		"OHMYTALOS_IP_ECHO_URL=" + s.IPEchoURL,
		fmt.Sprintf("OHMYTALOS_RESCUE_SSH_PORT=%d", s.RescueSSHPort),
		BWServeURLEnv + "=" + s.BWServeURL,
		BWItemEnv + "=" + s.BWItemID,
		ChartMirrorEnv + "=" + s.ChartsURL,
	}
}

// ChartMirrorEnv names the chart mirror: every https://HOST/PATH Helm
// repository is fetched from $OHMYTALOS_CHART_MIRROR/HOST/PATH instead
// (HELM-DESIGN.md, charts.Source.Mirror).
const ChartMirrorEnv = "OHMYTALOS_CHART_MIRROR"

// The variables Env sets for the bw step: the bw serve URL and the ID of
// the item holding the Hetzner token.
const (
	BWServeURLEnv = "OHMYTALOS_BW_SERVE_URL"
	BWItemEnv     = "OHMYTALOS_BW_ITEM"
)

// BWItemName is the name of the sandbox vault's item holding the token.
const BWItemName = "ohmytalos sandbox hcloud token"

// echoIP answers the caller's address as plain text, as public IP-echo
// services do: in the sandbox the operator is whoever dials loopback, the
// address the fake firewalls see.
func echoIP(w http.ResponseWriter, r *http.Request) {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		http.Error(w, "no remote address", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/plain")
	fmt.Fprintln(w, host)
}

// Close stops every fake and removes the temporary work dir.
func (s *Sandbox) Close() error {
	s.cancel()
	if s.Kube != nil {
		s.Kube.Stop() // no go or compile process outlives the sandbox
	}
	if s.srv != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		_ = s.srv.Shutdown(ctx)
		cancel()
	}
	s.mu.Lock()
	for id, r := range s.rescue {
		_ = r.Close()
		delete(s.rescue, id)
	}
	s.mu.Unlock()
	s.mu.Lock()
	ids := make([]int64, 0, len(s.nodes))
	for id := range s.nodes {
		ids = append(ids, id)
	}
	s.nodes = map[int64]bool{}
	s.mu.Unlock()
	for _, id := range ids {
		s.Talos.StopNode(id)
	}
	if s.Talos != nil {
		s.Talos.Close()
	}
	if s.HCloud != nil {
		s.HCloud.Close()
	}
	if s.tmpDir != "" {
		_ = os.RemoveAll(s.tmpDir)
	}
	return nil
}

// allocateIP picks a random loopback address whose Talos and rescue ports
// are free, so sandboxes in parallel test processes do not collide.
func (s *Sandbox) allocateIP() (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for try := 0; try < 200; try++ {
		var b [3]byte
		for i := range b {
			n, err := rand.Int(rand.Reader, big.NewInt(254))
			if err != nil {
				return "", err
			}
			b[i] = byte(n.Int64() + 1)
		}
		ip := fmt.Sprintf("127.%d.%d.%d", b[0], b[1], b[2])
		if s.usedIPs[ip] || !free(ip, 50000) || !free(ip, s.RescueSSHPort) || !free(ip, 6443) {
			continue
		}
		s.usedIPs[ip] = true
		return ip, nil
	}
	return "", errors.New("sandbox: no free loopback address found")
}

// diskPath is the file holding a fake server's disk.
func (s *Sandbox) diskPath(id int64) string {
	return filepath.Join(s.opts.WorkDir, fmt.Sprintf("server-%d.disk", id))
}

func free(ip string, port int) bool {
	ln, err := net.Listen("tcp", net.JoinHostPort(ip, fmt.Sprint(port)))
	if err != nil {
		return false
	}
	ln.Close()
	return true
}

// hooks attaches rescue systems and Talos nodes to fake servers.
type hooks struct{ s *Sandbox }

func (h hooks) ServerPoweredOn(info hcloudfake.ServerInfo) {
	s := h.s
	s.stop(info.ID)
	disk := s.diskPath(info.ID)
	if info.Rescue {
		r, err := rescuefake.Start(s.ctx, net.JoinHostPort(info.PublicIPv4, fmt.Sprint(s.RescueSSHPort)), info.RescueSSHKeys, disk, http.DefaultClient)
		if err != nil {
			s.log.Error("sandbox: rescue system did not start", "server", info.Name, "err", err)
			return
		}
		s.mu.Lock()
		s.rescue[info.ID] = r
		s.mu.Unlock()
		return
	}
	// What boots is what the disk holds: a Talos image written by the
	// rescue system's dd (or copied from a snapshot of such a disk) runs
	// Talos; an empty disk or any other system never does, whatever the
	// server's user_data says.
	talos, ok := factoryfake.ReadDiskHeader(disk)
	if !ok {
		s.log.Debug("sandbox: no Talos image on the disk; the server runs no Talos API", "server", info.Name, "image", info.ImageID)
		return
	}
	private, network := "", ""
	if len(info.PrivateIPs) > 0 {
		private = info.PrivateIPs[0]
	}
	if len(info.PrivateRanges) > 0 {
		network = info.PrivateRanges[0]
	}
	_, err := s.Talos.StartNode(s.ctx, talosfake.NodeOptions{
		ServerID: info.ID, Name: info.Name, PublicIP: info.PublicIPv4, PublicIPv6: info.PublicIPv6, PrivateIP: private,
		NetworkCIDR: network, MachineConfig: []byte(info.UserData), BootDelay: s.opts.BootDelay,
		TalosVersion: talos.Version, SchematicID: talos.Schematic,
	})
	if err != nil {
		s.log.Error("sandbox: Talos node did not start", "server", info.Name, "err", err)
		return
	}
	s.mu.Lock()
	s.nodes[info.ID] = true
	s.mu.Unlock()
}

func (h hooks) ServerPoweredOff(id int64) { h.s.stop(id) }

// ServerDeleted stops the server and, as a deleted server's disk is gone,
// makes Talos forget it: its etcd membership stays until a member removes
// it, and a cluster whose every member is deleted can be bootstrapped anew.
func (h hooks) ServerDeleted(id int64) {
	h.s.stop(id)
	h.s.Talos.ForgetServer(id)
}

func (s *Sandbox) stop(id int64) {
	s.mu.Lock()
	r := s.rescue[id]
	delete(s.rescue, id)
	delete(s.nodes, id)
	s.mu.Unlock()
	if r != nil {
		_ = r.Close()
	}
	s.Talos.StopNode(id)
}

func randomToken() string {
	b := make([]byte, 32)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

type nopWriter struct{}

func (nopWriter) Write(p []byte) (int, error) { return len(p), nil }

// markSandbox sets the header by which ohmytalos recognises the sandbox
// (Ohmytalos-Sandbox: 1, named in internal/cloud's SandboxHeader) on every
// answer: the SANDBOX label follows the endpoint actually dialled, never an
// environment variable left behind.
func markSandbox(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Ohmytalos-Sandbox", "1")
		h.ServeHTTP(w, r)
	})
}
