package doctor

import (
	"context"
	"testing"
)

func TestLBPending(t *testing.T) {
	ccm := map[string]string{EnvNetwork: "(from secret)"}
	ready := LBService{Namespace: "traefik", Name: "traefik", Ingress: []string{"198.51.100.7"}}
	cases := []struct {
		name   string
		kube   *fakeKube
		status Status
		want   []string
	}{
		{"none", &fakeKube{ccmEnv: ccm}, StatusPass, []string{"no Service of type LoadBalancer"}},
		{"addressed", &fakeKube{ccmEnv: ccm, services: []LBService{ready}}, StatusPass, []string{"traefik/traefik: address 198.51.100.7"}},
		{"no location", &fakeKube{ccmEnv: ccm, services: []LBService{ready, {Namespace: "default", Name: "web",
			Events: []string{"Error syncing load balancer: failed to ensure load balancer: hcloud/loadBalancers.EnsureLoadBalancer: hcops/LoadBalancerOps.Create: neither load-balancer.hetzner.cloud/location nor load-balancer.hetzner.cloud/network-zone set"}}}},
			StatusFail, []string{"default/web has no address", AnnLBLocation, EnvLBLocation, "last warning event: Error syncing load balancer", "annotate default/web"}},
		{"location from the controller", &fakeKube{ccmEnv: map[string]string{EnvNetwork: "1", EnvLBLocation: "nbg1"}, services: []LBService{{Namespace: "default", Name: "web"}}},
			StatusFail, []string{"the controller has reported nothing yet"}},
		{"private without network", &fakeKube{ccmEnv: map[string]string{EnvLBNetworkZone: "eu-central", EnvLBUsePrivateIP: "true"},
			services: []LBService{{Namespace: "default", Name: "web"}}}, StatusFail, []string{"no " + EnvNetwork, "set " + EnvNetwork}},
		{"private annotation off", &fakeKube{ccmEnv: map[string]string{EnvLBNetworkZone: "eu-central", EnvLBUsePrivateIP: "true"},
			services: []LBService{{Namespace: "default", Name: "web", Annotations: map[string]string{AnnLBUsePrivateIP: "false"},
				Events: []string{"quota exceeded"}}}}, StatusFail, []string{"the controller reports: quota exceeded"}},
		{"no controller", &fakeKube{services: []LBService{{Namespace: "default", Name: "web"}}}, StatusFail, []string{"no hcloud cloud controller is deployed"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			expect(t, checkLBPending(context.Background(), &Env{Kube: tc.kube}), tc.status, tc.want...)
		})
	}
	expect(t, checkLBPending(context.Background(), &Env{}), StatusSkip, "no kubeconfig")
}
