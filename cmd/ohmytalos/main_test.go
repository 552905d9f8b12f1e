package main

import (
	"os"
	"testing"

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
	for k, v := range map[string]string{
		"HCLOUD_ENDPOINT":       "http://127.0.0.1:1/v1",
		"OHMYTALOS_FACTORY_URL": "http://127.0.0.1:1/factory",
		"OHMYTALOS_IP_ECHO_URL": "http://127.0.0.1:1/ip",
		// A chart mirror that refuses: no test fetches charts from
		// helm.cilium.io or the other upstream repositories.
		"OHMYTALOS_CHART_MIRROR": "http://127.0.0.1:1/charts",
	} {
		if _, set := os.LookupEnv(k); !set {
			os.Setenv(k, v)
		}
	}
	os.Exit(m.Run())
}
