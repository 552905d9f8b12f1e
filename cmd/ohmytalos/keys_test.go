package main

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ohmytalos/ohmytalos/internal/sandbox"
	"github.com/ohmytalos/ohmytalos/internal/state"
)

// TestReadOnlyCommandsUnderAnotherHomeCreateNoIdentity: kubeconfig and
// talosconfig, run where the cluster's age identity is not, fail saying
// where they looked, and create no identity of their own.
func TestReadOnlyCommandsUnderAnotherHomeCreateNoIdentity(t *testing.T) {
	dir, cfg := seedConfig(t)
	sdir := filepath.Join(dir, "state")
	storeSecrets(t, sdir, map[string][]byte{"kubeconfig": []byte("apiVersion: v1\n"), "talosconfig": []byte("apiVersion: v1\n")})
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("OHMYTALOS_AGE_KEY_FILE", "")
	t.Setenv("SOPS_AGE_KEY_FILE", "")
	t.Setenv("XDG_CONFIG_HOME", "")
	for _, args := range [][]string{
		{"kubeconfig", "--config", cfg, "--state-dir", sdir, "--out", filepath.Join(dir, "kc")},
		{"talosconfig", "--config", cfg, "--state-dir", sdir},
	} {
		out, err := run(t, args...)
		if err == nil {
			t.Errorf("%s without the identity succeeded:\n%s", args[0], out)
			continue
		}
		if !strings.Contains(err.Error(), "no age identity found: looked in") || !strings.Contains(err.Error(), filepath.Join(home, ".config", "sops", "age", "keys.txt")) {
			t.Errorf("%s: %v, want where it looked and how to fix", args[0], err)
		}
	}
	if found, _ := filepath.Glob(filepath.Join(home, ".config", "*", "*")); len(found) != 0 {
		t.Errorf("a read-only command created %v", found)
	}
}

// hetznerFor points HCLOUD_ENDPOINT at a sandbox Hetzner API that accepts
// token: commands that create a Talos secrets bundle first check that no
// server of the cluster exists, and no test may reach the internet.
func hetznerFor(t *testing.T, token string) {
	t.Helper()
	sb, err := sandbox.Start(context.Background(), sandbox.Options{Token: token})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sb.Close() })
	t.Setenv("HCLOUD_ENDPOINT", sb.HCloudURL)
	t.Setenv("HCLOUD_TOKEN", token)
}

// standaloneSandbox starts a sandbox as "sandbox serve" runs it and exports
// the variables it prints (HCLOUD_ENDPOINT, HCLOUD_TOKEN, the factory and
// IP-echo URLs, the bw serve item) for the test; it stops with the test.
func standaloneSandbox(t *testing.T, o sandbox.Options) *sandbox.Sandbox {
	t.Helper()
	sb, err := sandbox.Start(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sb.Close() })
	for _, kv := range sb.Env() {
		k, v, _ := strings.Cut(kv, "=")
		t.Setenv(k, v)
	}
	return sb
}

// adminKubeconfig is a kubeconfig for the seed cluster's VIP whose user
// holds clientKeyData.
func adminKubeconfig(clientKeyData string) []byte {
	return []byte(`{"apiVersion":"v1","kind":"Config","clusters":[{"name":"demo","cluster":{"server":"https://10.0.1.100:6443"}}],` +
		`"users":[{"name":"admin@demo","user":{"client-key-data":"` + clientKeyData + `"}}],` +
		`"contexts":[{"name":"admin@demo","context":{"cluster":"demo","user":"admin@demo"}}],"current-context":"admin@demo"}`)
}

// storeSecrets writes secrets into the state in sdir, encrypted to the age
// identity the commands find, as an apply would have left them.
func storeSecrets(t *testing.T, sdir string, secrets map[string][]byte) {
	t.Helper()
	st, err := state.Open(sdir, "demo", nil)
	if err != nil {
		t.Fatal(err)
	}
	keys, err := state.LoadKeyring(state.KeyFileCandidates(), state.DefaultNewKeyFile())
	if err != nil {
		t.Fatal(err)
	}
	st.SetKeyLoader(func() (*state.Keyring, error) { return keys, nil })
	for name, data := range secrets {
		if err := st.PutSecret(name, data); err != nil {
			t.Fatal(err)
		}
	}
}
