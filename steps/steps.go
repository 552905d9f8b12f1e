// Package steps holds the provisioning steps, headless: secrets, images,
// network, pools, configs, servers, bootstrap, addons, scale-down and
// upgrade. Each is an engine.Step that looks resources up before creating
// them, so re-running is safe. Their names (StepSecrets, ...) live here;
// the engine only knows the StepName type. Destroy is steps/destroy.
// Nothing here imports the sandbox: cmd wires it (SandboxEndpoints), and a
// test keeps it so. The package serves cmd and ui; it is not a public API.
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
	"github.com/ohmytalos/ohmytalos/internal/myip"
	"github.com/ohmytalos/ohmytalos/internal/secrets"
	"github.com/ohmytalos/ohmytalos/internal/spec"
)

// Deps are the settings the steps share and the clients built from them.
// Secret values are looked up lazily, kept in memory only, and scrubbed by
// Redact; clients are built once per token reference (see clients).
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
	// AllowLockout lets apply set a firewall.allow that does not admit the
	// operator's detected address (apply --allow-lockout).
	AllowLockout bool
	// IPEchoURL is the IP-echo service that finds the operator's address
	// for the firewall (the sandbox's; else $OHMYTALOS_IP_ECHO_URL or the
	// public default, see internal/myip).
	IPEchoURL string

	clients clients
}

// clients caches looked-up secret values and the Hetzner clients, both
// keyed by the secret reference: a reference corrected after a failed
// check (in the wizard, in the same process) is looked up anew and gets
// its own client, never the old token's.
type clients struct {
	// lookupMu serializes secret lookups and client creation: steps run
	// concurrently, and one bw unlock prompt or API client is enough.
	lookupMu sync.Mutex
	mu       sync.Mutex
	values   map[string]secrets.Value
	hcloud   map[string]*hcloud.Client
	plan     map[string]*hcloud.Client // plan's: no retry on 429
	// retired are values dropped by forget, still redacted: messages
	// carrying them may be on their way out.
	retired  []secrets.Value
	operator map[string]myip.Addresses // echo URLs -> the operator's address
}

// Redact replaces every looked-up secret value in s.
func (d *Deps) Redact(s string) string {
	return secrets.Redact(s, d.SecretValues()...)
}

// SecretValues returns every secret value looked up so far (retired ones
// included), for a redaction done elsewhere (the command's).
func (d *Deps) SecretValues() []secrets.Value {
	d.clients.mu.Lock()
	defer d.clients.mu.Unlock()
	vals := make([]secrets.Value, 0, len(d.clients.values)+len(d.clients.retired))
	for _, v := range d.clients.values {
		vals = append(vals, v)
	}
	return append(vals, d.clients.retired...)
}

func toRef(r spec.SecretRef) secrets.Ref {
	return secrets.Ref{Provider: r.Provider, Ref: r.Ref, Field: r.Field, ServerURL: r.ServerURL}
}

// Secret looks a reference up once per process and caches the value.
func (d *Deps) Secret(ctx context.Context, field string, ref spec.SecretRef) (secrets.Value, error) {
	d.clients.lookupMu.Lock()
	defer d.clients.lookupMu.Unlock()
	return d.secret(ctx, field, ref)
}

func (d *Deps) secret(ctx context.Context, field string, ref spec.SecretRef) (secrets.Value, error) {
	key := toRef(ref).String()
	d.clients.mu.Lock()
	v, ok := d.clients.values[key]
	d.clients.mu.Unlock()
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
	d.clients.mu.Lock()
	if d.clients.values == nil {
		d.clients.values = map[string]secrets.Value{}
	}
	d.clients.values[key] = v
	d.clients.mu.Unlock()
	return v, nil
}

// forget drops what was cached for a reference (its value and client), so
// the next use looks it up again: after the token was rejected, the
// operator may have fixed the secret where the reference points.
func (d *Deps) forget(ref spec.SecretRef) {
	key := toRef(ref).String()
	d.clients.mu.Lock()
	defer d.clients.mu.Unlock()
	delete(d.clients.hcloud, key)
	delete(d.clients.plan, key)
	if v, ok := d.clients.values[key]; ok {
		delete(d.clients.values, key)
		d.clients.retired = append(d.clients.retired, v)
	}
}

// HCloud returns the Hetzner client for the spec's token reference,
// looking the token up on first use of that reference.
func (d *Deps) HCloud(ctx context.Context, s *spec.Spec) (*hcloud.Client, error) {
	return d.hcloudClient(ctx, s, false)
}

// PlanHCloud is HCloud for read-only runs (plan, pre-flight, prices): the
// first 429 fails with a message (cloud.RateLimitedError) instead of being
// retried until the budget refills, so that they never hang on a spent
// budget.
func (d *Deps) PlanHCloud(ctx context.Context, s *spec.Spec) (*hcloud.Client, error) {
	return d.hcloudClient(ctx, s, true)
}

func (d *Deps) hcloudClient(ctx context.Context, s *spec.Spec, plan bool) (*hcloud.Client, error) {
	d.clients.lookupMu.Lock()
	defer d.clients.lookupMu.Unlock()
	key := toRef(s.Secrets.HCloudToken).String()
	cache := &d.clients.hcloud
	if plan {
		cache = &d.clients.plan
	}
	d.clients.mu.Lock()
	c := (*cache)[key]
	d.clients.mu.Unlock()
	if c != nil {
		return c, nil
	}
	if err := cloud.CheckEndpoint(d.HCloudEndpoint); err != nil {
		return nil, err
	}
	tok, err := d.secret(ctx, "secrets.hcloudToken", s.Secrets.HCloudToken)
	if err != nil {
		return nil, err
	}
	c = cloud.NewClient(strings.TrimSpace(tok.Reveal()), cloud.Options{
		Endpoint: d.HCloudEndpoint, Version: d.Version, PollInterval: d.PollInterval, Meter: d.Meter, StopOnRateLimit: plan,
	})
	d.clients.mu.Lock()
	if *cache == nil {
		*cache = map[string]*hcloud.Client{}
	}
	(*cache)[key] = c
	d.clients.mu.Unlock()
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

// All returns the steps in order. The configs step owns the rendered
// configs; the servers step reads them from it.
func All(d *Deps) []engine.Step {
	configs := &Configs{d: d}
	return []engine.Step{
		&Secrets{d}, &Images{d}, &Network{d}, &Pools{d}, configs, &Servers{d: d, configs: configs}, &Bootstrap{d}, &Addons{d}, &ScaleDown{d}, &Upgrade{d: d, configs: configs},
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
func (s *Images) After() []engine.StepName { return []engine.StepName{StepSecrets} }

// After implements engine.Dependent.
func (s *Network) After() []engine.StepName { return []engine.StepName{StepSecrets} }

// After implements engine.Dependent.
func (s *Pools) After() []engine.StepName { return []engine.StepName{StepNetwork} }

// After implements engine.Dependent: the API load balancer's address goes
// into the configs in loadbalancer endpoint mode.
func (s *Configs) After() []engine.StepName { return []engine.StepName{StepPools} }

// After implements engine.Dependent.
func (s *Servers) After() []engine.StepName {
	return []engine.StepName{StepImages, StepConfigs}
}

// After implements engine.Dependent.
func (s *Bootstrap) After() []engine.StepName { return []engine.StepName{StepServers} }
