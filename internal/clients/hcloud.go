package clients

import (
	"context"
	"errors"
	"strings"

	"github.com/hetznercloud/hcloud-go/v2/hcloud"

	"github.com/ohmytalos/ohmytalos/internal/cloud"
	"github.com/ohmytalos/ohmytalos/internal/spec"
)

// HCloud returns the Hetzner client for the spec's token reference,
// looking the token up on first use of that reference.
func (c *Set) HCloud(ctx context.Context, s *spec.Spec) (*hcloud.Client, error) {
	return c.hcloudClient(ctx, s, false)
}

// PlanHCloud is HCloud for read-only runs (plan, pre-flight, prices): the
// first 429 fails with a message (cloud.RateLimitedError) instead of being
// retried until the budget refills, so that they never hang on a spent
// budget.
func (c *Set) PlanHCloud(ctx context.Context, s *spec.Spec) (*hcloud.Client, error) {
	if c.Offline {
		return nil, ErrOffline
	}
	return c.hcloudClient(ctx, s, true)
}

// ErrOffline is PlanHCloud's error when Set.Offline is set.
var ErrOffline = errors.New("--offline: the Hetzner API is not asked")

func (c *Set) hcloudClient(ctx context.Context, s *spec.Spec, plan bool) (*hcloud.Client, error) {
	c.cache.lookupMu.Lock()
	defer c.cache.lookupMu.Unlock()
	key := ToRef(s.Secrets.HCloudToken).String()
	cache := &c.cache.hcloud
	if plan {
		cache = &c.cache.plan
	}
	if hc, ok := cached(&c.cache.mu, cache, key); ok {
		return hc, nil
	}
	if err := cloud.CheckEndpoint(c.HCloudEndpoint); err != nil {
		return nil, err
	}
	tok, err := c.secret(ctx, "secrets.hcloudToken", s.Secrets.HCloudToken)
	if err != nil {
		return nil, err
	}
	hc := cloud.NewClient(strings.TrimSpace(tok.Reveal()), cloud.Options{
		Endpoint: c.HCloudEndpoint, Version: c.Version, PollInterval: c.PollInterval, Meter: c.Meter, StopOnRateLimit: plan,
	})
	remember(&c.cache.mu, cache, key, hc)
	return hc, nil
}
