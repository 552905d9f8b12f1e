package ui

import (
	"strings"
	"testing"

	"github.com/ohmytalos/ohmytalos/internal/spec"
)

// In the sandbox the secrets screen offers the sandbox vault's bw lookup
// first, filled in, and enter looks the token up with it.
func TestSecretsOffersTheSandboxVaultFirst(t *testing.T) {
	g, b := guardedBackend(t)
	vault := spec.SecretRef{Provider: "bw", Ref: "6a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d", ServerURL: "http://127.0.0.1:8080/bw"}
	b.SandboxVault = &vault
	h := newHarnessFor(t, g, b, Options{Width: 120, Height: 40})
	h.open(scrSecrets)
	view := h.m.View()
	mustContain(t, view, "[bw]  env   bws", vault.Ref, vault.ServerURL, "Vaultwarden vault (bw serve at "+vault.ServerURL+")")
	h.Key("enter")
	h.WaitFor("token checked", func() bool { return h.m.screens[scrSecrets].(*secretsScreen).result == runOK })
	if got := b.Env.Spec.Secrets.HCloudToken; got != vault {
		t.Errorf("the secrets step ran with %+v, want the vault reference %+v", got, vault)
	}
	// env stays a choice: ← → switches the provider.
	h.Key("right")
	if got := h.m.c.spec.Secrets.HCloudToken.Provider; got != "env" {
		t.Errorf("provider after → = %q, want env", got)
	}
}

// Outside the sandbox, or with a reference the operator chose, nothing is
// pre-filled.
func TestSecretsKeepsAChosenReference(t *testing.T) {
	g, b := guardedBackend(t)
	b.Env.Spec.Secrets.HCloudToken = spec.SecretRef{Provider: "env", Ref: "MY_TOKEN"}
	b.SandboxVault = &spec.SecretRef{Provider: "bw", Ref: "x", ServerURL: "http://127.0.0.1:1/bw"}
	h := newHarnessFor(t, g, b, Options{Width: 120, Height: 40})
	h.open(scrSecrets)
	if got := h.m.c.spec.Secrets.HCloudToken; got.Provider != "env" || got.Ref != "MY_TOKEN" {
		t.Errorf("reference = %+v, want the operator's env MY_TOKEN", got)
	}
	if !strings.Contains(h.m.View(), "MY_TOKEN") {
		t.Error("the chosen reference is not shown")
	}
}
