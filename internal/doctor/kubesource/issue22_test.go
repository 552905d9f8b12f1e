package kubesource

import (
	"context"
	"testing"
)

// TestSourceReadsServicesPullsAndVersions covers the reads of lb-pending,
// image-pulls and version-skew against a plain API server.
func TestSourceReadsServicesPullsAndVersions(t *testing.T) {
	src := sourceFor(t, map[string]any{
		"/api/v1/services": map[string]any{"metadata": map[string]any{}, "items": []any{
			map[string]any{"metadata": map[string]any{"namespace": "default", "name": "web"}, "spec": map[string]any{"type": "LoadBalancer"}},
			map[string]any{"metadata": map[string]any{"namespace": "default", "name": "shop", "annotations": map[string]string{"load-balancer.hetzner.cloud/location": "nbg1"}},
				"spec": map[string]any{"type": "LoadBalancer"}, "status": map[string]any{"loadBalancer": map[string]any{"ingress": []any{map[string]any{"ip": "198.51.100.7"}}}}},
			map[string]any{"metadata": map[string]any{"namespace": "default", "name": "kubernetes"}, "spec": map[string]any{"type": "ClusterIP"}},
		}},
		"/api/v1/events": map[string]any{"metadata": map[string]any{}, "items": []any{
			map[string]any{"involvedObject": map[string]any{"namespace": "default", "name": "web"}, "message": "second", "lastTimestamp": "2026-12-01T10:02:00Z"},
			map[string]any{"involvedObject": map[string]any{"namespace": "default", "name": "web"}, "message": "first", "lastTimestamp": "2026-12-01T10:01:00Z"},
		}},
		"/apis/apps/v1/namespaces/kube-system/deployments/hcloud-cloud-controller-manager": map[string]any{"spec": map[string]any{"template": map[string]any{"spec": map[string]any{
			"containers": []any{map[string]any{"name": "hcloud-cloud-controller-manager", "env": []any{
				map[string]any{"name": "HCLOUD_NETWORK", "valueFrom": map[string]any{"secretKeyRef": map[string]any{"name": "hcloud", "key": "network"}}},
				map[string]any{"name": "HCLOUD_LOAD_BALANCERS_USE_PRIVATE_IP", "value": "true"},
			}}}}}}},
		"/api/v1/pods": map[string]any{"metadata": map[string]any{}, "items": []any{
			map[string]any{"metadata": map[string]any{"namespace": "default", "name": "agnhost"}, "spec": map[string]any{"nodeName": "w-1"},
				"status": map[string]any{"containerStatuses": []any{map[string]any{"name": "app", "image": "registry.k8s.io/e2e-test-images/agnhost:2.53",
					"state": map[string]any{"waiting": map[string]any{"reason": "ImagePullBackOff", "message": "Back-off pulling image"}}}}}},
			map[string]any{"metadata": map[string]any{"namespace": "default", "name": "crash"}, "spec": map[string]any{"nodeName": "w-1"},
				"status": map[string]any{"containerStatuses": []any{map[string]any{"name": "app", "image": "x",
					"state": map[string]any{"waiting": map[string]any{"reason": "CrashLoopBackOff"}}}}}},
		}},
		"/api/v1/nodes": map[string]any{"metadata": map[string]any{}, "items": []any{
			map[string]any{"metadata": map[string]any{"name": "w-1"}, "status": map[string]any{"nodeInfo": map[string]any{"kubeletVersion": "v1.36.3"}}},
		}},
	})
	ctx := context.Background()
	svcs, err := src.LoadBalancerServices(ctx)
	if err != nil || len(svcs) != 2 || svcs[0].Name != "web" || len(svcs[0].Events) != 2 || svcs[0].Events[1] != "second" ||
		len(svcs[1].Ingress) != 1 || svcs[1].Annotations["load-balancer.hetzner.cloud/location"] != "nbg1" {
		t.Fatalf("services = %+v, %v", svcs, err)
	}
	env, err := src.CloudControllerEnv(ctx)
	if err != nil || env["HCLOUD_NETWORK"] != "(from valueFrom)" || env["HCLOUD_LOAD_BALANCERS_USE_PRIVATE_IP"] != "true" {
		t.Fatalf("ccm env = %v, %v", env, err)
	}
	pulls, err := src.PullFailures(ctx)
	if err != nil || len(pulls) != 1 || pulls[0].Pod != "agnhost" || pulls[0].Node != "w-1" || pulls[0].Reason != "ImagePullBackOff" {
		t.Fatalf("pulls = %+v, %v", pulls, err)
	}
	nodes, err := src.Nodes(ctx)
	if err != nil || len(nodes) != 1 || nodes[0].KubeletVersion != "v1.36.3" {
		t.Fatalf("nodes = %+v, %v", nodes, err)
	}
}
