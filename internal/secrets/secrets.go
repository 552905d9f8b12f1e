// Package secrets looks up credentials (the Hetzner API token, a Tailscale
// auth key, S3 keys) from where operators keep them: environment variables,
// a Vaultwarden or Bitwarden password manager vault through the `bw` CLI or a
// running `bw serve`, and Bitwarden Secrets Manager through its Go SDK.
//
// Specs and state hold only a Ref; the secret itself travels as a Value,
// which refuses to print itself anywhere (fmt, JSON, text, slog) so that a
// secret cannot leak into a log, an event or an error by accident.
package secrets

import (
	"context"
	"fmt"
	"log/slog"
	"sort"
	"strings"
)

// Provider names.
const (
	// ProviderEnv reads an environment variable; Ref is its name.
	ProviderEnv = "env"
	// ProviderBW reads a password manager item through the bw CLI or a
	// bw serve API; Ref is the item ID.
	ProviderBW = "bw"
	// ProviderBWS reads a Bitwarden Secrets Manager secret; Ref is the
	// secret's ID.
	ProviderBWS = "bws"
)

// Redacted is what a Value prints instead of the secret.
const Redacted = "[redacted]"

// Ref points at a secret without holding it: this is what specs and state
// store.
type Ref struct {
	// Provider is env, bw or bws.
	Provider string `json:"provider" yaml:"provider"`
	// Ref is the variable name (env), item ID (bw) or secret ID (bws).
	Ref string `json:"ref" yaml:"ref"`
	// Field picks a part of a bw item: a custom field's name, or username,
	// password or notes; empty means the login password. For bws it is
	// value (the default) or note.
	Field string `json:"field,omitempty" yaml:"field,omitempty"`
	// ServerURL is, for bw, the URL of a running `bw serve` (used instead of
	// the CLI) and, for bws, the Bitwarden server (EU cloud or self-hosted)
	// when it is not the US cloud.
	ServerURL string `json:"serverURL,omitempty" yaml:"serverURL,omitempty"`
}

// String names the reference, never a secret: "bw:ITEM_ID#field".
func (r Ref) String() string {
	s := r.Provider + ":" + r.Ref
	if r.Field != "" {
		s += "#" + r.Field
	}
	return s
}

// Value holds a secret. Every way of printing or encoding it yields
// "[redacted]"; only Reveal returns the secret. The secret sits behind a
// pointer so that even reflection-based printing of a struct holding a Value
// in an unexported field shows an address, not the secret.
type Value struct {
	s *string
}

// NewValue wraps a secret.
func NewValue(secret string) Value { return Value{s: &secret} }

// Reveal returns the secret. Call it only where the secret is handed to the
// system that needs it (an API client, a config file written encrypted).
func (v Value) Reveal() string {
	if v.s == nil {
		return ""
	}
	return *v.s
}

// IsZero reports whether the Value holds no secret or an empty one.
func (v Value) IsZero() bool { return v.Reveal() == "" }

// String implements fmt.Stringer.
func (Value) String() string { return Redacted }

// GoString implements fmt.GoStringer (%#v).
func (Value) GoString() string { return Redacted }

// Format implements fmt.Formatter so that every verb (%s %v %+v %#v %q %x
// ...) prints the redaction marker.
func (Value) Format(f fmt.State, _ rune) { _, _ = f.Write([]byte(Redacted)) }

// MarshalJSON implements json.Marshaler.
func (Value) MarshalJSON() ([]byte, error) { return []byte(`"` + Redacted + `"`), nil }

// MarshalText implements encoding.TextMarshaler (also used by YAML encoders).
func (Value) MarshalText() ([]byte, error) { return []byte(Redacted), nil }

// MarshalYAML implements yaml.Marshaler (go.yaml.in/yaml/v3).
func (Value) MarshalYAML() (any, error) { return Redacted, nil }

// LogValue implements slog.LogValuer.
func (Value) LogValue() slog.Value { return slog.StringValue(Redacted) }

// Provider looks secrets up in one kind of store.
type Provider interface {
	// Name returns the provider's name (env, bw, bws).
	Name() string
	// Lookup returns the secret ref points at.
	Lookup(ctx context.Context, ref Ref) (Value, error)
}

// Redact replaces every occurrence of each non-empty value in s with
// "[redacted]", and of the value with surrounding space trimmed (what API
// clients are given, so what their errors echo), JSON-escaped or Go-quoted
// (a key's line ends inside a JSON document or a %q). Longer secrets go first, so
// a secret inside another leaves no part of the longer one. Use it on text
// that came from elsewhere (a command's output, a remote error) before
// logging, storing or returning it.
func Redact(s string, values ...Value) string {
	var secrets []string
	for _, v := range values {
		raw := v.Reveal()
		if trimmed := strings.TrimSpace(raw); trimmed != "" { // blank is no secret
			secrets = append(secrets, raw, trimmed)
			secrets = append(secrets, quotedForms(trimmed)...)
		}
	}
	sort.SliceStable(secrets, func(i, j int) bool { return len(secrets[i]) > len(secrets[j]) })
	for _, secret := range secrets {
		s = strings.ReplaceAll(s, secret, Redacted)
	}
	return s
}
