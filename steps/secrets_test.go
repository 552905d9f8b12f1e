package steps

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ohmytalos/ohmytalos/internal/engine"
	"github.com/ohmytalos/ohmytalos/internal/sandbox"
	"github.com/ohmytalos/ohmytalos/internal/secrets"
	"github.com/ohmytalos/ohmytalos/internal/spec"
	"github.com/ohmytalos/ohmytalos/internal/state"
)

func secretsEnv(t *testing.T) *engine.Env {
	t.Helper()
	st, err := state.Open(filepath.Join(t.TempDir(), "state"), "demo", nil)
	if err != nil {
		t.Fatal(err)
	}
	return &engine.Env{Spec: spec.Default("demo"), State: st}
}

func TestReadOnlyTokenIsRefusedBeforeAnythingIsCreated(t *testing.T) {
	sb, err := sandbox.Start(context.Background(), sandbox.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer sb.Close()
	d := sandboxDeps(sb, nil, "test")
	var msgs []string
	err = (&Secrets{d}).Apply(context.Background(), secretsEnv(t), func(ev engine.Event) { msgs = append(msgs, ev.Message) })
	if err == nil || !strings.Contains(err.Error(), "read-only") || !strings.Contains(err.Error(), "Read & Write") {
		t.Fatalf("err = %v", err)
	}
	if strings.Contains(err.Error(), sb.Token) || strings.Contains(strings.Join(msgs, "\n"), sb.Token) {
		t.Error("the token leaked into an error or event")
	}
	for _, n := range sb.HCloud.Counts() {
		if n != 0 {
			t.Errorf("something was created: %v", sb.HCloud.Counts())
		}
	}
}

func TestWrongTokenAndMissingVariable(t *testing.T) {
	sb, err := sandbox.Start(context.Background(), sandbox.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer sb.Close()
	d := sandboxDeps(sb, nil, "test")
	d.Resolver = secrets.NewResolver(secrets.Options{Env: func(k string) (string, bool) {
		if k == "HCLOUD_TOKEN" {
			return strings.Repeat("x", 64), true
		}
		return "", false
	}})
	err = (&Secrets{d}).Apply(context.Background(), secretsEnv(t), func(engine.Event) {})
	if err == nil || !strings.Contains(err.Error(), "rejected the token") || strings.Contains(err.Error(), strings.Repeat("x", 64)) {
		t.Errorf("wrong token: %v", err)
	}
	d2 := sandboxDeps(sb, nil, "test")
	d2.Resolver = secrets.NewResolver(secrets.Options{Env: func(string) (string, bool) { return "", false }})
	err = (&Secrets{d2}).Apply(context.Background(), secretsEnv(t), func(engine.Event) {})
	if err == nil || !strings.Contains(err.Error(), "HCLOUD_TOKEN") || !strings.Contains(err.Error(), "secrets.hcloudToken") {
		t.Errorf("missing variable: %v", err)
	}
}
