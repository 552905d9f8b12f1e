package secrets

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"time"
)

// Options configures a Resolver. The zero value reads the process
// environment, runs "bw" from PATH and uses a 30 s HTTP client.
type Options struct {
	// Env looks up environment variables (os.LookupEnv when nil). It feeds
	// the env provider, BW_SESSION for bw, and BWS_ACCESS_TOKEN for bws.
	Env func(string) (string, bool)
	// BWPath is the bw executable, a name looked up on PATH or a path
	// ("bw" when empty).
	BWPath string
	// BWServeURL is the URL of a running `bw serve` (for example
	// http://localhost:8087); when set, bw refs without their own ServerURL
	// use it instead of the CLI.
	BWServeURL string
	// HTTPClient talks to bw serve.
	HTTPClient *http.Client
	// BWTimeout bounds each bw command (default 60 s): a bw waiting for a
	// prompt it cannot show must not hang the run.
	BWTimeout time.Duration
}

// Resolver looks a Ref up with the provider it names.
type Resolver struct {
	env       envProvider
	bw        *bwProvider
	bws       bwsProvider
	providers map[string]Provider
}

// NewResolver returns a resolver with the env, bw and bws providers.
func NewResolver(opts Options) *Resolver {
	if opts.Env == nil {
		opts.Env = os.LookupEnv
	}
	if opts.BWPath == "" {
		opts.BWPath = "bw"
	}
	if opts.HTTPClient == nil {
		opts.HTTPClient = &http.Client{Timeout: 30 * time.Second}
	}
	if opts.BWTimeout <= 0 {
		opts.BWTimeout = 60 * time.Second
	}
	r := &Resolver{
		env: envProvider{lookup: opts.Env},
		bw:  &bwProvider{path: opts.BWPath, serveURL: opts.BWServeURL, env: opts.Env, hc: opts.HTTPClient, timeout: opts.BWTimeout},
		bws: bwsProvider{env: opts.Env},
	}
	r.providers = map[string]Provider{
		ProviderEnv: r.env,
		ProviderBW:  r.bw,
		ProviderBWS: r.bws,
	}
	return r
}

// Provider returns the named provider, so callers can pass one around.
func (r *Resolver) Provider(name string) (Provider, bool) {
	p, ok := r.providers[name]
	return p, ok
}

// Lookup returns the secret ref points at. Errors name the reference and say
// how to fix the problem; they never contain the secret.
func (r *Resolver) Lookup(ctx context.Context, ref Ref) (Value, error) {
	if ref.Ref == "" {
		return Value{}, fmt.Errorf("secret reference %q has no ref: set the variable name (env), item ID (bw) or secret ID (bws)", ref.String())
	}
	p, ok := r.providers[ref.Provider]
	if !ok {
		return Value{}, fmt.Errorf("secret reference %s: unknown provider %q: use env, bw (Vaultwarden/Bitwarden password manager) or bws (Bitwarden Secrets Manager)",
			ref.String(), ref.Provider)
	}
	v, err := p.Lookup(ctx, ref)
	if err != nil {
		return Value{}, err
	}
	if v.IsZero() {
		return Value{}, fmt.Errorf("secret %s is empty: store a value there", ref.String())
	}
	return v, nil
}

// envProvider reads environment variables.
type envProvider struct {
	lookup func(string) (string, bool)
}

// Name implements Provider.
func (envProvider) Name() string { return ProviderEnv }

// Lookup implements Provider.
func (p envProvider) Lookup(_ context.Context, ref Ref) (Value, error) {
	if ref.Ref == "" {
		return Value{}, errors.New("env secret reference has no variable name")
	}
	v, ok := p.lookup(ref.Ref)
	if !ok {
		return Value{}, fmt.Errorf("environment variable %s is not set: export %s=... (or add it to your .envrc) and retry", ref.Ref, ref.Ref)
	}
	return NewValue(v), nil
}
