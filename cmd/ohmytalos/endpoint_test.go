package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ohmytalos/ohmytalos/internal/sandbox"
)

// TestSandboxLabelFollowsTheEndpoint: OHMYTALOS_SANDBOX=1 left in the
// environment of a run against another API labels nothing SANDBOX; a run
// against a served sandbox is labelled without it.
func TestSandboxLabelFollowsTheEndpoint(t *testing.T) {
	ipEcho(t)
	_, cfg := seedConfig(t)
	t.Setenv("OHMYTALOS_SANDBOX", "1")
	t.Setenv("HCLOUD_TOKEN", strings.Repeat("r", 64))
	t.Setenv("HCLOUD_ENDPOINT", echoingHetzner(t))
	for _, args := range [][]string{{"plan", "--config", cfg}, {"plan", "--json", "--config", cfg}} {
		out, _ := run(t, args...)
		if strings.Contains(out, "SANDBOX") || strings.Contains(out, `"sandbox": true`) {
			t.Errorf("%s against a non-sandbox endpoint is labelled SANDBOX:\n%s", strings.Join(args, " "), out)
		}
	}

	standaloneSandbox(t, sandbox.Options{})
	t.Setenv("OHMYTALOS_SANDBOX", "")
	out, err := run(t, "plan", "--config", cfg)
	if err != nil {
		t.Fatalf("plan against the served sandbox: %v\n%s", err, out)
	}
	if !strings.Contains(out, "SANDBOX") {
		t.Errorf("plan against the served sandbox is not labelled SANDBOX:\n%s", out)
	}
}

// TestPlainHTTPToRemoteHostsIsRefused points each URL at another machine
// over plain http (TEST-NET addresses, never dialled: the URL is refused
// first); each error names the variable and says to use https.
func TestPlainHTTPToRemoteHostsIsRefused(t *testing.T) {
	dir, cfg := seedConfig(t)
	schematic := filepath.Join(dir, "empty.yaml")
	os.WriteFile(schematic, []byte("customization: {}\n"), 0o600)
	cases := []struct {
		env, value, token string
		args              []string
	}{
		{"HCLOUD_ENDPOINT", "http://192.0.2.1/v1", strings.Repeat("r", 64), []string{"destroy", "--yes", "--config", cfg}},
		{"OHMYTALOS_FACTORY_URL", "http://192.0.2.2", "", []string{"schematic", "id", "--register", schematic}},
		// Without a token the plan asks no Hetzner API, but still the
		// echo service for the firewall's source.
		{"OHMYTALOS_IP_ECHO_URL", "http://192.0.2.3/ip", "", []string{"plan", "--config", cfg}},
	}
	for _, c := range cases {
		t.Run(c.env, func(t *testing.T) {
			t.Setenv("HCLOUD_TOKEN", c.token)
			t.Setenv(c.env, c.value)
			out, err := run(t, c.args...)
			msg := out
			if err != nil {
				msg += err.Error()
			}
			if !strings.Contains(msg, c.env) || !strings.Contains(msg, "use https") {
				t.Errorf("%s=%s: no refusal naming the variable and the fix:\n%s", c.env, c.value, msg)
			}
		})
	}
}
