//go:build unix

package kubereal_test

import (
	"context"
	"fmt"
	"net"
	"testing"
	"time"

	"github.com/hetznercloud/hcloud-go/v2/hcloud"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func condition(n *corev1.Node, typ corev1.NodeConditionType) *corev1.NodeCondition {
	for i := range n.Status.Conditions {
		if n.Status.Conditions[i].Type == typ {
			return &n.Status.Conditions[i]
		}
	}

	return nil
}

// The CCM's route controller against the real API server: the real node
// IPAM controller assigns pod CIDRs, and with networking on each gets a
// route through its server's private IP, a stale route in the cluster
// CIDR goes, one outside it stays, and each node's NetworkUnavailable
// turns False, surviving the kubelet's status updates.
func TestRouteControllerRoutesPodCIDRs(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()

	e := startCloud(t, ctx, map[string]map[string]string{"cp-1": nil, "w-1": nil})

	route := func(dst, gw string) hcloud.NetworkRoute {
		_, d, _ := net.ParseCIDR(dst)

		return hcloud.NetworkRoute{Destination: d, Gateway: net.ParseIP(gw)}
	}

	for _, r := range []hcloud.NetworkRoute{route("10.244.99.0/24", "10.0.1.200"), route("192.168.0.0/24", "10.0.1.201")} {
		a, _, err := e.hc.Network.AddRoute(ctx, e.network, hcloud.NetworkAddRouteOpts{Route: r})
		if err == nil {
			err = e.hc.Action.WaitFor(ctx, a)
		}

		if err != nil {
			t.Fatal(err)
		}
	}

	e.ccm(t, ctx, map[string]string{"HCLOUD_NETWORK": "k8s"}, "--allocate-node-cidrs=true", "--cluster-cidr=10.244.0.0/16")
	e.initialized(t, ctx)

	waitFor(t, 2*time.Minute, "one route per node's pod CIDR through its private IP, the stale one gone", func() (bool, error) {
		nw, _, err := e.hc.Network.GetByID(ctx, e.network.ID)
		if err != nil {
			return false, err
		}

		have := map[string]string{}
		for _, r := range nw.Routes {
			have[r.Destination.String()] = r.Gateway.String()
		}

		nodes, err := e.admin.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, err
		}

		want := map[string]string{"192.168.0.0/24": "10.0.1.201"}

		for _, n := range nodes.Items {
			if n.Spec.PodCIDR == "" {
				return false, fmt.Errorf("node %s has no pod CIDR yet", n.Name)
			}

			want[n.Spec.PodCIDR] = e.servers[n.Name].PrivateNet[0].IP.String()
		}

		return fmt.Sprint(have) == fmt.Sprint(want), fmt.Errorf("routes %v, want %v", have, want)
	})

	var since time.Time

	waitFor(t, time.Minute, "NetworkUnavailable False (RouteCreated) on every node", func() (bool, error) {
		nodes, err := e.admin.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, err
		}

		for i := range nodes.Items {
			c := condition(&nodes.Items[i], corev1.NodeNetworkUnavailable)
			if c == nil || c.Status != corev1.ConditionFalse || c.Reason != "RouteCreated" {
				return false, fmt.Errorf("node %s: %+v", nodes.Items[i].Name, c)
			}

			if nodes.Items[i].Name == "w-1" {
				since = c.LastTransitionTime.Time
			}
		}

		return true, nil
	})

	waitFor(t, time.Minute, "the kubelets' next status updates keep the condition", func() (bool, error) {
		n, err := e.admin.CoreV1().Nodes().Get(ctx, "w-1", metav1.GetOptions{})
		if err != nil {
			return false, err
		}

		ready, net := condition(n, corev1.NodeReady), condition(n, corev1.NodeNetworkUnavailable)
		if ready == nil || !ready.LastHeartbeatTime.After(since.Add(time.Second)) {
			return false, nil
		}

		return net != nil && net.Status == corev1.ConditionFalse && net.LastTransitionTime.Time.Equal(since), fmt.Errorf("NetworkUnavailable after a heartbeat: %+v", net)
	})
}
