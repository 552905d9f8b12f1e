package main

import (
	"net/http/httptest"
	"os"
	"testing"

	"github.com/ohmytalos/ohmytalos/internal/sandbox/chartrepo"
	"github.com/ohmytalos/ohmytalos/ui/theme/quietstart"
)

// TestMain puts TERM back, as main does: the test binary imports
// quietstart too, and main() does not run here. It also points every
// outside service at a closed loopback port unless a test sets its own, so
// a test that forgets the sandbox fails at once instead of reaching
// api.hetzner.cloud, the Image Factory, an IP-echo service or a chart
// repository.
func TestMain(m *testing.M) {
	quietstart.Restore()
	// The sandbox's stand-in charts serve talos-config and apply: no test
	// fetches charts from helm.cilium.io or the other upstream
	// repositories.
	repo, err := chartrepo.New()
	if err != nil {
		panic(err)
	}
	charts := httptest.NewServer(repo)
	for k, v := range map[string]string{
		"HCLOUD_ENDPOINT":        "http://127.0.0.1:1/v1",
		"OHMYTALOS_FACTORY_URL":  "http://127.0.0.1:1/factory",
		"OHMYTALOS_IP_ECHO_URL":  "http://127.0.0.1:1/ip",
		"OHMYTALOS_CHART_MIRROR": charts.URL,
	} {
		if _, set := os.LookupEnv(k); !set {
			os.Setenv(k, v)
		}
	}
	code := m.Run()
	charts.Close()
	removeBuiltBinary()
	os.Exit(code)
}
