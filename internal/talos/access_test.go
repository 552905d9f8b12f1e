package talos

import (
	"slices"
	"testing"

	"github.com/siderolabs/talos/pkg/machinery/config/types/runtime/extensions"
)

// The control planes advertise the private network to the tailnet, and
// the control planes' public addresses are API server SANs.
func TestRenderAccess(t *testing.T) {
	c := testCluster()
	c.TailscaleRoutes = []string{"10.0.0.0/16"}
	c.CertSANs = []string{"203.0.113.11", "203.0.113.12"}
	_, d := render(t, testBundle(t), c, controlPlaneGroup())

	svcs := find[*extensions.ServiceConfigV1Alpha1](d)
	if len(svcs) != 1 || !slices.Contains(svcs[0].Environment(), "TS_ROUTES=10.0.0.0/16") {
		t.Fatalf("tailscale environment lacks TS_ROUTES: %+v", svcs)
	}
	for _, san := range []string{"203.0.113.11", "203.0.113.12", "10.0.1.100"} {
		if !slices.Contains(d.v1.ClusterConfig.APIServerConfig.CertSANs, san) {
			t.Errorf("API server certSANs %v lack %s", d.v1.ClusterConfig.APIServerConfig.CertSANs, san)
		}
	}

	c.TailscaleRoutes = nil
	_, d = render(t, testBundle(t), c, controlPlaneGroup())
	for _, e := range find[*extensions.ServiceConfigV1Alpha1](d)[0].Environment() {
		if len(e) > 9 && e[:9] == "TS_ROUTES" {
			t.Errorf("TS_ROUTES without routes: %s", e)
		}
	}
}
