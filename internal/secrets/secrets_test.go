package secrets_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/ohmytalos/ohmytalos/internal/secrets"
)

const secret = "tok-3f9a-VERY-s3cret"

func TestValueNeverPrints(t *testing.T) {
	t.Parallel()
	v := secrets.NewValue(secret)
	type exported struct {
		Name  string
		Token secrets.Value
	}
	type hidden struct {
		name  string
		token secrets.Value
	}
	holders := []any{v, &v, exported{"hcloud", v}, &exported{"hcloud", v}, hidden{"hcloud", v}, []secrets.Value{v},
		map[string]secrets.Value{"k": v}}

	var outputs []string
	for _, h := range holders {
		for _, verb := range []string{"%v", "%+v", "%#v", "%s", "%q", "%x", "%X", "%d", "%10.3s", "%T"} {
			outputs = append(outputs, fmt.Sprintf(verb, h))
		}
		outputs = append(outputs, fmt.Sprint(h), fmt.Sprintln(h))
		if b, err := json.Marshal(h); err == nil {
			outputs = append(outputs, string(b))
		} else if _, ok := h.(hidden); !ok {
			t.Errorf("json.Marshal(%T): %v", h, err)
		}
		if b, err := yaml.Marshal(h); err == nil {
			outputs = append(outputs, string(b))
		}
	}
	text, err := v.MarshalText()
	if err != nil {
		t.Fatal(err)
	}
	outputs = append(outputs, string(text))

	var logs bytes.Buffer
	for _, h := range []slog.Handler{slog.NewTextHandler(&logs, nil), slog.NewJSONHandler(&logs, nil)} {
		l := slog.New(h)
		l.Info("lookup", "token", v, "holder", exported{"x", v}, slog.Any("ptr", &v), slog.Group("g", "t", v))
	}
	outputs = append(outputs, logs.String())

	err = fmt.Errorf("wrap %v and %w", v, errors.New("cause"))
	outputs = append(outputs, err.Error())

	for _, out := range outputs {
		if strings.Contains(out, secret) || strings.Contains(out, fmt.Sprintf("%x", secret)) {
			t.Fatalf("secret leaked: %q", out)
		}
	}
	if !strings.Contains(logs.String(), secrets.Redacted) || !strings.Contains(fmt.Sprintf("%+v", exported{"x", v}), secrets.Redacted) {
		t.Fatal("redaction marker missing")
	}
	if v.Reveal() != secret {
		t.Fatal("Reveal lost the secret")
	}
}

func TestRedact(t *testing.T) {
	t.Parallel()
	a, b := secrets.NewValue("alpha-s3cret"), secrets.NewValue("beta")
	got := secrets.Redact("curl -H 'Authorization: Bearer alpha-s3cret' beta/beta", a, b, secrets.Value{}, secrets.NewValue(""))
	if want := "curl -H 'Authorization: Bearer [redacted]' [redacted]/[redacted]"; got != want {
		t.Fatalf("Redact = %q, want %q", got, want)
	}
}

func TestRedactTrimmedAndNested(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, in, want string
		values         []string
	}{
		{"a secret read with its newline is also redacted trimmed", "401: token tok-123 invalid", "401: token [redacted] invalid", []string{"tok-123\n"}},
		{"spaces around", "auth  tok-456  failed; tok-456", "auth[redacted]failed; [redacted]", []string{"  tok-456  "}},
		{"a secret inside another leaves nothing of the longer", "key abcdef", "key [redacted]", []string{"abc", "abcdef"}},
		{"all space is not a secret", "a b", "a b", []string{" "}},
	} {
		var vals []secrets.Value
		for _, v := range tc.values {
			vals = append(vals, secrets.NewValue(v))
		}
		if got := secrets.Redact(tc.in, vals...); got != tc.want {
			t.Errorf("%s: Redact = %q, want %q", tc.name, got, tc.want)
		}
	}
}

func TestEnvProvider(t *testing.T) {
	t.Parallel()
	r := secrets.NewResolver(secrets.Options{Env: envMap(map[string]string{"HCLOUD_TOKEN": secret, "EMPTY": ""})})
	ctx := context.Background()

	v, err := r.Lookup(ctx, secrets.Ref{Provider: "env", Ref: "HCLOUD_TOKEN"})
	if err != nil || v.Reveal() != secret {
		t.Fatalf("Lookup = %v, %v", v, err)
	}
	_, err = r.Lookup(ctx, secrets.Ref{Provider: "env", Ref: "TS_AUTHKEY"})
	if err == nil || !strings.Contains(err.Error(), "TS_AUTHKEY is not set") || !strings.Contains(err.Error(), "export TS_AUTHKEY=") {
		t.Fatalf("missing variable: err = %v", err)
	}
	if _, err := r.Lookup(ctx, secrets.Ref{Provider: "env", Ref: "EMPTY"}); err == nil || !strings.Contains(err.Error(), "empty") {
		t.Fatalf("empty variable: err = %v", err)
	}
	if _, err := r.Lookup(ctx, secrets.Ref{Provider: "vault", Ref: "x"}); err == nil || !strings.Contains(err.Error(), "unknown provider") {
		t.Fatalf("unknown provider: err = %v", err)
	}
	if _, err := r.Lookup(ctx, secrets.Ref{Provider: "env"}); err == nil || !strings.Contains(err.Error(), "no ref") {
		t.Fatalf("empty ref: err = %v", err)
	}
	if p, ok := r.Provider("env"); !ok || p.Name() != "env" {
		t.Fatal("Provider(env) missing")
	}
}

func TestRefString(t *testing.T) {
	t.Parallel()
	if got := (secrets.Ref{Provider: "bw", Ref: "id", Field: "token"}).String(); got != "bw:id#token" {
		t.Fatalf("String() = %q", got)
	}
}
