package steps

import (
	"context"
	"io"
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/hetznercloud/hcloud-go/v2/hcloud"

	"github.com/ohmytalos/ohmytalos/internal/addons"
	"github.com/ohmytalos/ohmytalos/internal/cloud"
	"github.com/ohmytalos/ohmytalos/internal/engine"
)

// ingressLB is the ingress load balancer after apply: the cloud
// controller manages its services and targets for Service traefik/traefik,
// which apply installs with the ingress add-on's release.
func (c *doctorCluster) ingressLB(t *testing.T) *hcloud.LoadBalancer {
	t.Helper()
	hc := cloud.NewClient(c.sb.Token, cloud.Options{Endpoint: c.sb.HCloudURL, PollInterval: 10 * time.Millisecond})
	lb, _, err := hc.LoadBalancer.GetByName(context.Background(), addons.IngressLBName(c.env.Spec))
	if err != nil || lb == nil {
		t.Fatalf("the ingress load balancer after apply: %v", err)
	}
	if len(lb.Services) != 2 || len(lb.Targets) != 2 {
		t.Fatalf("the ingress load balancer after apply: services %v, targets %v; want the cloud controller's 2 and 2", lb.Services, lb.Targets)
	}
	return lb
}

// checkIngressServes is issue 20's "done when" on the sandbox's real
// control plane (TestAppliedSeedServesAndPassesTheDoctor/ingress): after
// apply on the seed spec, which installs the ingress Traefik, the
// simulated cloud controller adopts the load balancer for the Service,
// kubereal's Traefik stand-in answers on the workers' node ports, an HTTP
// request through the sandbox's load balancer gets Traefik's 404, and a
// second apply changes nothing on the load balancer the cloud controller
// manages. lb-targets and lb-owners pass on the same cluster
// (checkDoctorHealthy).
func checkIngressServes(t *testing.T, c *doctorCluster) {
	before := c.ingressLB(t)
	for _, s := range before.Services {
		if s.DestinationPort < 30000 || s.HealthCheck.Port != s.DestinationPort {
			t.Errorf("service %d -> %d (health %d): want the Service's node port", s.ListenPort, s.DestinationPort, s.HealthCheck.Port)
		}
	}
	// apply waited for the targets to pass their health checks.
	addr, err := c.sb.HCloud.ListenAddr(before.Name, 80)
	if err != nil {
		t.Fatal(err)
	}
	client := &http.Client{Timeout: 2 * time.Second}
	var status int
	var body string
	waitForWithin(t, 2*time.Minute, "an HTTP answer through "+addr, func() (bool, string) {
		resp, err := client.Get("http://" + addr + "/")
		if err != nil {
			return false, err.Error()
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		status, body = resp.StatusCode, string(b)
		return true, ""
	})
	if status != http.StatusNotFound || body != "404 page not found\n" {
		t.Fatalf("through the load balancer: %d %q, want Traefik's 404 page not found", status, body)
	}

	var updates []engine.Event
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if err := c.eng.Run(ctx, c.env, engine.Options{Redact: c.deps.Redact}, func(ev engine.Event) {
		if ev.Resource == "load-balancer/"+before.Name && ev.Action != engine.ActionReuse {
			updates = append(updates, ev)
		}
	}); err != nil {
		t.Fatalf("second apply: %v", err)
	}
	if len(updates) > 0 {
		t.Errorf("the second apply changed the load balancer: %+v", updates)
	}
	hc := cloud.NewClient(c.sb.Token, cloud.Options{Endpoint: c.sb.HCloudURL, PollInterval: 10 * time.Millisecond})
	after, _, err := hc.LoadBalancer.GetByID(context.Background(), before.ID)
	if err != nil || after == nil {
		t.Fatalf("ingress load balancer after the second apply: %v", err)
	}
	same := func(a, b hcloud.LoadBalancerService) bool { return formatService(a) == formatService(b) }
	if !slices.EqualFunc(before.Services, after.Services, same) || len(after.Targets) != len(before.Targets) {
		t.Errorf("services or targets changed: %v %v -> %v %v", before.Services, before.Targets, after.Services, after.Targets)
	}
}
