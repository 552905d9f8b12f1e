// Package clients builds and caches what the steps talk to: looked-up
// secret values, the Hetzner clients (one per token reference), the
// Kubernetes and Talos clients of a cluster, the Image Factory client and
// the operator's address from the IP-echo services. cmd builds one Set per
// process and hands it to the steps; it is no service locator: it holds
// clients and their settings, nothing a step decides.
package clients

import (
	"context"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/hetznercloud/hcloud-go/v2/hcloud"

	"github.com/ohmytalos/ohmytalos/internal/charts"
	"github.com/ohmytalos/ohmytalos/internal/cloud"
	"github.com/ohmytalos/ohmytalos/internal/myip"
	"github.com/ohmytalos/ohmytalos/internal/secrets"
)

// Set holds the clients' settings and caches the values and clients built
// from them. Secret values are looked up lazily, kept in memory only, and
// scrubbed by Redact. The zero value of every setting has a default; the
// caches need no initialisation.
type Set struct {
	// Log is the process's logger.
	Log *slog.Logger
	// Version is ohmytalos' version, sent in the Hetzner client's user agent.
	Version string
	// Resolver looks secret references up.
	Resolver *secrets.Resolver
	// HCloudEndpoint overrides $HCLOUD_ENDPOINT (the sandbox sets it).
	HCloudEndpoint string
	// Offline makes PlanHCloud fail with ErrOffline (plan --offline): a
	// read-only run then plans from the spec and the state alone.
	Offline bool
	// Meter counts the Hetzner requests and the rate limit left.
	Meter *cloud.Meter
	// FactoryURL is the Image Factory (default https://factory.talos.dev,
	// or $OHMYTALOS_FACTORY_URL).
	FactoryURL string
	// HTTP is the client for the Image Factory and the IP-echo services.
	HTTP *http.Client
	// PollInterval paces action and readiness polling.
	PollInterval time.Duration
	// IPEchoURL is the IP-echo service that finds the operator's address
	// for the firewall (the sandbox's; else $OHMYTALOS_IP_ECHO_URL or the
	// public default, see internal/myip).
	IPEchoURL string
	// ChartMirror, when set, serves every upstream chart repository
	// https://HOST/PATH under ChartMirror+"/HOST/PATH" (the sandbox's
	// stand-in charts, or $OHMYTALOS_CHART_MIRROR): charts.Source.Mirror.
	ChartMirror string
	// ChartMirrorUse, when set, tallies the charts fetched through
	// ChartMirror (cmd prints it when the run ends).
	ChartMirrorUse *charts.MirrorUse
	// ChartCache is the chart cache folder ("" = the user's cache
	// directory, ohmytalos/charts).
	ChartCache string
	// KubeReady, in the sandbox, waits until the cluster's Kubernetes
	// control plane can run (its binaries are built on first use, in the
	// background), calling progress every few seconds while it waits
	// (what it waits for, and how far along it is, 0 to 1);
	// nil waits for nothing (Hetzner, or binaries at hand).
	KubeReady func(ctx context.Context, progress func(message string, fraction float64)) error

	cache cache
}

// cache holds looked-up secret values and the Hetzner clients, both keyed
// by the secret reference: a reference corrected after a failed check (in
// the wizard, in the same process) is looked up anew and gets its own
// client, never the old token's.
type cache struct {
	// lookupMu serializes secret lookups and client creation: steps run
	// concurrently, and one bw unlock prompt or API client is enough.
	lookupMu sync.Mutex
	mu       sync.Mutex
	values   map[string]secrets.Value
	hcloud   map[string]*hcloud.Client
	plan     map[string]*hcloud.Client // plan's: no retry on 429
	// retired are values dropped by Forget, still redacted: messages
	// carrying them may be on their way out.
	retired  []secrets.Value
	operator map[string]myip.Addresses // echo URLs -> the operator's address
}

// cached is what *m holds for key, read under mu.
func cached[V any](mu *sync.Mutex, m *map[string]V, key string) (V, bool) {
	mu.Lock()
	defer mu.Unlock()
	v, ok := (*m)[key]
	return v, ok
}

// remember stores v under key in *m (made when nil), under mu.
func remember[V any](mu *sync.Mutex, m *map[string]V, key string, v V) {
	mu.Lock()
	defer mu.Unlock()
	if *m == nil {
		*m = map[string]V{}
	}
	(*m)[key] = v
}
