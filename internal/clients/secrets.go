package clients

import (
	"context"
	"fmt"
	"strings"

	"github.com/ohmytalos/ohmytalos/internal/secrets"
	"github.com/ohmytalos/ohmytalos/internal/spec"
)

// Redact replaces every looked-up secret value in s.
func (c *Set) Redact(s string) string {
	return secrets.Redact(s, c.SecretValues()...)
}

// SecretValues returns every secret value looked up so far (retired ones
// included), for a redaction done elsewhere (the command's).
func (c *Set) SecretValues() []secrets.Value {
	c.cache.mu.Lock()
	defer c.cache.mu.Unlock()
	vals := make([]secrets.Value, 0, len(c.cache.values)+len(c.cache.retired))
	for _, v := range c.cache.values {
		vals = append(vals, v)
	}
	return append(vals, c.cache.retired...)
}

// ToRef is the secrets package's reference for a spec's.
func ToRef(r spec.SecretRef) secrets.Ref {
	return secrets.Ref{Provider: r.Provider, Ref: r.Ref, Field: r.Field, ServerURL: r.ServerURL}
}

// Secret looks a reference up once per process and caches the value.
func (c *Set) Secret(ctx context.Context, field string, ref spec.SecretRef) (secrets.Value, error) {
	c.cache.lookupMu.Lock()
	defer c.cache.lookupMu.Unlock()
	return c.secret(ctx, field, ref)
}

func (c *Set) secret(ctx context.Context, field string, ref spec.SecretRef) (secrets.Value, error) {
	key := ToRef(ref).String()
	if v, ok := cached(&c.cache.mu, &c.cache.values, key); ok {
		return v, nil
	}
	if c.Resolver == nil {
		return secrets.Value{}, fmt.Errorf("%s: no secret resolver configured", field)
	}
	v, err := c.Resolver.Lookup(ctx, ToRef(ref))
	if err != nil {
		return secrets.Value{}, fmt.Errorf("%s (%s): %w", field, ToRef(ref), err)
	}
	if strings.TrimSpace(v.Reveal()) == "" {
		return secrets.Value{}, fmt.Errorf("%s (%s) is empty: store the secret there, or point the reference elsewhere", field, ToRef(ref))
	}
	remember(&c.cache.mu, &c.cache.values, key, v)
	return v, nil
}

// Forget drops what was cached for a reference (its value and client), so
// the next use looks it up again: after the token was rejected, the
// operator may have fixed the secret where the reference points.
func (c *Set) Forget(ref spec.SecretRef) {
	key := ToRef(ref).String()
	c.cache.mu.Lock()
	defer c.cache.mu.Unlock()
	delete(c.cache.hcloud, key)
	delete(c.cache.plan, key)
	if v, ok := c.cache.values[key]; ok {
		delete(c.cache.values, key)
		c.cache.retired = append(c.cache.retired, v)
	}
}
