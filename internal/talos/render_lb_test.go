package talos

import "testing"

// TestRenderLoadBalancerExclusion checks that every worker pool that is no
// public load balancer target carries the label the hcloud CCM honours.
func TestRenderLoadBalancerExclusion(t *testing.T) {
	plain := workerGroup()
	plain.LoadBalancer = false
	cases := []struct {
		name     string
		group    NodeGroup
		excluded bool
	}{
		{"worker behind the load balancer", workerGroup(), false},
		{"worker with loadBalancer false", plain, true},
		{"storage pool", storageGroup(), true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, d := render(t, testBundle(t), testCluster(), c.group)
			v, ok := d.v1.MachineConfig.MachineNodeLabels[LabelExcludeFromExternalLB]
			if c.excluded && (!ok || v != "true") {
				t.Errorf("label %s = %q (set %v), want \"true\"", LabelExcludeFromExternalLB, v, ok)
			}
			if !c.excluded && ok {
				t.Errorf("a load balancer target carries %s", LabelExcludeFromExternalLB)
			}
		})
	}
}
