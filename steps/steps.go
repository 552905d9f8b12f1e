// Package steps holds the provisioning steps, headless: secrets, images,
// network, pools, configs, servers and bootstrap. Each is an engine.Step
// that looks resources up before creating them, so re-running is safe.
package steps

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/hetznercloud/hcloud-go/v2/hcloud"

	"github.com/ohmytalos/ohmytalos/internal/cloud"
	"github.com/ohmytalos/ohmytalos/internal/engine"
	"github.com/ohmytalos/ohmytalos/internal/secrets"
	"github.com/ohmytalos/ohmytalos/internal/spec"
	"github.com/ohmytalos/ohmytalos/internal/talos"
)

// Deps are the clients and settings the steps share. Secret values are
// looked up lazily, kept in memory only, and scrubbed by Redact.
type Deps struct {
	Log      *slog.Logger
	Sandbox  bool
	Version  string
	Resolver *secrets.Resolver
	// HCloudEndpoint overrides $HCLOUD_ENDPOINT (the sandbox sets it).
	HCloudEndpoint string
	Meter          *cloud.Meter
	// FactoryURL is the Image Factory (default https://factory.talos.dev,
	// or $OHMYTALOS_FACTORY_URL).
	FactoryURL string
	HTTP       *http.Client
	// SSHPort is where rescue systems listen (22 on Hetzner).
	SSHPort int
	// PollInterval paces action and readiness polling.
	PollInterval time.Duration
	// Timeouts for waiting on nodes (default 15 minutes).
	NodeTimeout time.Duration

	// lookupMu serializes secret lookups and client creation: steps run
	// concurrently, and one bw unlock prompt or API client is enough.
	lookupMu sync.Mutex
	mu       sync.Mutex
	values   map[string]secrets.Value
	client   *hcloud.Client
	rendered map[string]map[string]talos.Rendered // spec hash/state dir -> configs
}

// Redact replaces every looked-up secret value in s.
func (d *Deps) Redact(s string) string {
	d.mu.Lock()
	defer d.mu.Unlock()
	vals := make([]secrets.Value, 0, len(d.values))
	for _, v := range d.values {
		vals = append(vals, v)
	}
	return secrets.Redact(s, vals...)
}

func toRef(r spec.SecretRef) secrets.Ref {
	return secrets.Ref{Provider: r.Provider, Ref: r.Ref, Field: r.Field, ServerURL: r.ServerURL}
}

// Secret looks a reference up once per process and caches the value.
func (d *Deps) Secret(ctx context.Context, field string, ref spec.SecretRef) (secrets.Value, error) {
	d.lookupMu.Lock()
	defer d.lookupMu.Unlock()
	return d.secret(ctx, field, ref)
}

func (d *Deps) secret(ctx context.Context, field string, ref spec.SecretRef) (secrets.Value, error) {
	key := toRef(ref).String()
	d.mu.Lock()
	v, ok := d.values[key]
	d.mu.Unlock()
	if ok {
		return v, nil
	}
	if d.Resolver == nil {
		return secrets.Value{}, fmt.Errorf("%s: no secret resolver configured", field)
	}
	v, err := d.Resolver.Lookup(ctx, toRef(ref))
	if err != nil {
		return secrets.Value{}, fmt.Errorf("%s (%s): %w", field, toRef(ref), err)
	}
	if strings.TrimSpace(v.Reveal()) == "" {
		return secrets.Value{}, fmt.Errorf("%s (%s) is empty: store the secret there, or point the reference elsewhere", field, toRef(ref))
	}
	d.mu.Lock()
	if d.values == nil {
		d.values = map[string]secrets.Value{}
	}
	d.values[key] = v
	d.mu.Unlock()
	return v, nil
}

// HCloud returns the Hetzner client, looking the token up on first use.
func (d *Deps) HCloud(ctx context.Context, s *spec.Spec) (*hcloud.Client, error) {
	d.lookupMu.Lock()
	defer d.lookupMu.Unlock()
	d.mu.Lock()
	c := d.client
	d.mu.Unlock()
	if c != nil {
		return c, nil
	}
	tok, err := d.secret(ctx, "secrets.hcloudToken", s.Secrets.HCloudToken)
	if err != nil {
		return nil, err
	}
	c = cloud.NewClient(strings.TrimSpace(tok.Reveal()), cloud.Options{
		Endpoint: d.HCloudEndpoint, Version: d.Version, PollInterval: d.PollInterval, Meter: d.Meter,
	})
	d.mu.Lock()
	d.client = c
	d.mu.Unlock()
	return c, nil
}

func (d *Deps) poll() time.Duration {
	if d.PollInterval > 0 {
		return d.PollInterval
	}
	return 2 * time.Second
}

func (d *Deps) nodeTimeout() time.Duration {
	if d.NodeTimeout > 0 {
		return d.NodeTimeout
	}
	return 15 * time.Minute
}

// All returns the steps in order.
func All(d *Deps) []engine.Step {
	return []engine.Step{
		&Secrets{d}, &Images{d}, &Network{d}, &Pools{d}, &Configs{d}, &Servers{d}, &Bootstrap{d}, &Addons{d},
	}
}

// rateEvent reports the API budget left, when known.
func (d *Deps) rateEvent(emit engine.Emit) {
	if d.Meter == nil {
		return
	}
	if rem, lim, ok := d.Meter.RateLimit(); ok {
		emit(engine.Event{Kind: engine.KindLog, Message: fmt.Sprintf("Hetzner API: %d of %d requests left this hour", rem, lim), Resource: "ratelimit",
			RateLimit: &engine.RateLimit{Remaining: rem, Limit: lim}})
	}
}

// The steps' dependencies (engine.Dependent): image builds, the slowest
// part, overlap the network, pools and configs.

// After implements engine.Dependent.
func (s *Images) After() []string { return []string{"secrets"} }

// After implements engine.Dependent.
func (s *Network) After() []string { return []string{"secrets"} }

// After implements engine.Dependent.
func (s *Pools) After() []string { return []string{"network"} }

// After implements engine.Dependent: the API load balancer's address goes
// into the configs in loadbalancer endpoint mode.
func (s *Configs) After() []string { return []string{"pools"} }

// After implements engine.Dependent.
func (s *Servers) After() []string { return []string{"images", "configs"} }

// After implements engine.Dependent.
func (s *Bootstrap) After() []string { return []string{"servers"} }
