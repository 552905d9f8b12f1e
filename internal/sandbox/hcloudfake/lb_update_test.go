package hcloudfake_test

import (
	"testing"
	"time"

	"github.com/hetznercloud/hcloud-go/v2/hcloud"

	"github.com/ohmytalos/ohmytalos/internal/sandbox/hcloudfake"
)

func TestLoadBalancerUpdateServiceAndChangeType(t *testing.T) {
	_, c := newPlainEnv(t)
	res, _, err := c.LoadBalancer.Create(ctx(t), hcloud.LoadBalancerCreateOpts{Name: "lb", LoadBalancerType: &hcloud.LoadBalancerType{Name: "lb21"},
		NetworkZone: hcloud.NetworkZoneEUCentral, Services: []hcloud.LoadBalancerCreateOptsService{{
			Protocol: hcloud.LoadBalancerServiceProtocolTCP, ListenPort: hcloud.Ptr(80), DestinationPort: hcloud.Ptr(80), Proxyprotocol: hcloud.Ptr(false),
			HealthCheck: &hcloud.LoadBalancerCreateOptsServiceHealthCheck{Protocol: hcloud.LoadBalancerServiceProtocolTCP, Port: hcloud.Ptr(80),
				Interval: hcloud.Ptr(15 * time.Second), Timeout: hcloud.Ptr(10 * time.Second), Retries: hcloud.Ptr(3)}}}})
	if err != nil {
		t.Fatal(err)
	}
	lb := res.LoadBalancer
	if _, _, err := c.LoadBalancer.UpdateService(ctx(t), lb, 81, hcloud.LoadBalancerUpdateServiceOpts{Proxyprotocol: hcloud.Ptr(true)}); !hcloud.IsError(err, hcloud.ErrorCodeNotFound) {
		t.Errorf("update of a service that does not exist: %v, want not_found", err)
	}
	if _, _, err := c.LoadBalancer.UpdateService(ctx(t), lb, 80, hcloud.LoadBalancerUpdateServiceOpts{Proxyprotocol: hcloud.Ptr(true),
		HealthCheck: &hcloud.LoadBalancerUpdateServiceOptsHealthCheck{Interval: hcloud.Ptr(30 * time.Second)}}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := c.LoadBalancer.ChangeType(ctx(t), lb, hcloud.LoadBalancerChangeTypeOpts{LoadBalancerType: &hcloud.LoadBalancerType{Name: "lb99"}}); !hcloud.IsError(err, hcloud.ErrorCodeInvalidInput) {
		t.Errorf("change to an unknown type: %v, want invalid_input", err)
	}
	if _, _, err := c.LoadBalancer.ChangeType(ctx(t), lb, hcloud.LoadBalancerChangeTypeOpts{LoadBalancerType: &hcloud.LoadBalancerType{Name: "lb11"}}); err != nil {
		t.Fatal(err)
	}
	got, _, err := c.LoadBalancer.GetByID(ctx(t), lb.ID)
	if err != nil {
		t.Fatal(err)
	}
	s := got.Services[0]
	if got.LoadBalancerType.Name != "lb11" || !s.Proxyprotocol || s.HealthCheck.Interval != 30*time.Second || s.HealthCheck.Timeout != 10*time.Second {
		t.Errorf("after update: type %s, service %+v", got.LoadBalancerType.Name, s)
	}
}

func TestLoadBalancerChangeTypeRefusesASmallerTypeThanItsServices(t *testing.T) {
	e := newEnv(t, hcloudfake.Options{})
	c := e.client
	opts := hcloud.LoadBalancerCreateOpts{Name: "lb", LoadBalancerType: &hcloud.LoadBalancerType{Name: "lb21"}, NetworkZone: hcloud.NetworkZoneEUCentral}
	for p := 1; p <= 6; p++ {
		opts.Services = append(opts.Services, hcloud.LoadBalancerCreateOptsService{Protocol: hcloud.LoadBalancerServiceProtocolTCP,
			ListenPort: hcloud.Ptr(8000 + p), DestinationPort: hcloud.Ptr(8000 + p), Proxyprotocol: hcloud.Ptr(false),
			HealthCheck: &hcloud.LoadBalancerCreateOptsServiceHealthCheck{Protocol: hcloud.LoadBalancerServiceProtocolTCP, Port: hcloud.Ptr(8000 + p),
				Interval: hcloud.Ptr(15 * time.Second), Timeout: hcloud.Ptr(10 * time.Second), Retries: hcloud.Ptr(3)}})
	}
	res, _, err := c.LoadBalancer.Create(ctx(t), opts)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := c.LoadBalancer.ChangeType(ctx(t), res.LoadBalancer, hcloud.LoadBalancerChangeTypeOpts{LoadBalancerType: &hcloud.LoadBalancerType{Name: "lb11"}}); err == nil {
		t.Error("lb11 (5 services) accepted a load balancer with 6 services")
	}
}
