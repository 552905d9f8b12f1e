//go:build unix

package kubereal_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hetznercloud/hcloud-go/v2/hcloud"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func lbService(name string, ann map[string]string) *corev1.Service {
	return &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default", Annotations: ann},
		Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeLoadBalancer, Selector: map[string]string{"app": name},
			Ports: []corev1.ServicePort{{Name: "http", Port: 80}, {Name: "https", Port: 443}}}}
}

func (e *cloudEnv) lbNamed(ctx context.Context, name string) (*hcloud.LoadBalancer, error) {
	lb, _, err := e.hc.LoadBalancer.GetByName(ctx, name)

	return lb, err
}

// The CCM's service controller provisions, adopts and deletes Hetzner
// load balancers for LoadBalancer Services against the real API server:
// a Service without a location stays pending with the CCM's error, the
// control plane labelled for exclusion gets no target, and the cleanup
// finalizer holds a deleted Service until its load balancer is gone.
func TestServiceControllerLoadBalancers(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()

	e := startCloud(t, ctx, map[string]map[string]string{
		// Talos labels control planes for exclusion by default.
		"cp-1": {"node-role.kubernetes.io/control-plane": "", "node.kubernetes.io/exclude-from-external-load-balancers": ""},
		"w-1":  nil,
	})

	// An LB made beforehand (by Terraform, say) that a Service adopts by name.
	pre, _, err := e.hc.LoadBalancer.Create(ctx, hcloud.LoadBalancerCreateOpts{Name: "ingress-lb", LoadBalancerType: &hcloud.LoadBalancerType{Name: "lb11"},
		Location: &hcloud.Location{Name: "nbg1"}, Labels: map[string]string{"owner": "terraform"}})
	if err != nil {
		t.Fatal(err)
	}

	// Before the CCM runs, nothing happens.
	if _, err := e.admin.CoreV1().Services("default").Create(ctx, lbService("pending", nil), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	e.ccm(t, ctx, map[string]string{"HCLOUD_NETWORK": "k8s"})
	e.initialized(t, ctx)

	// No location, no network zone: SyncLoadBalancerFailed, as hcloud-ccm #1070.
	waitFor(t, 2*time.Minute, "the Service without a location gets SyncLoadBalancerFailed", func() (bool, error) {
		evs, err := e.admin.CoreV1().Events("default").List(ctx, metav1.ListOptions{FieldSelector: "involvedObject.name=pending,reason=SyncLoadBalancerFailed"})
		if err != nil || len(evs.Items) == 0 {
			return false, err
		}

		want := "Error syncing load balancer: failed to ensure load balancer: hcloud/loadBalancers.EnsureLoadBalancer: hcops/LoadBalancerOps.Create: neither load-balancer.hetzner.cloud/location nor load-balancer.hetzner.cloud/network-zone set"
		if evs.Items[0].Message != want || evs.Items[0].Source.Component != "service-controller" {
			return false, fmt.Errorf("event %q from %q, want %q", evs.Items[0].Message, evs.Items[0].Source.Component, want)
		}

		return true, nil
	})

	if got, _ := e.admin.CoreV1().Services("default").Get(ctx, "pending", metav1.GetOptions{}); len(got.Status.LoadBalancer.Ingress) != 0 ||
		!slices.Contains(got.Finalizers, "service.kubernetes.io/load-balancer-cleanup") {
		t.Errorf("pending Service: ingress %v finalizers %v, want none and the cleanup finalizer (added before the attempt)", got.Status.LoadBalancer.Ingress, got.Finalizers)
	}

	web, err := e.admin.CoreV1().Services("default").Create(ctx, lbService("web", map[string]string{
		"load-balancer.hetzner.cloud/location": "fsn1", "load-balancer.hetzner.cloud/type": "lb21", "load-balancer.hetzner.cloud/use-private-ip": "true",
	}), metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}

	adopt, err := e.admin.CoreV1().Services("default").Create(ctx, lbService("adopt", map[string]string{"load-balancer.hetzner.cloud/name": "ingress-lb"}), metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}

	defaultName := "a" + strings.ReplaceAll(string(web.UID), "-", "")
	defaultName = defaultName[:32]

	var lb *hcloud.LoadBalancer

	waitFor(t, 2*time.Minute, "web gets its load balancer's addresses", func() (bool, error) {
		got, err := e.admin.CoreV1().Services("default").Get(ctx, "web", metav1.GetOptions{})
		if err != nil || len(got.Status.LoadBalancer.Ingress) == 0 {
			return false, err
		}

		if lb, err = e.lbNamed(ctx, defaultName); err != nil || lb == nil {
			return false, fmt.Errorf("load balancer %s: %v %v", defaultName, lb, err)
		}

		var ips []string
		for _, in := range got.Status.LoadBalancer.Ingress {
			ips = append(ips, in.IP)
		}

		want := []string{lb.PublicNet.IPv4.IP.String(), lb.PublicNet.IPv6.IP.String()}
		for _, pn := range lb.PrivateNet {
			want = append(want, pn.IP.String())
		}

		if !slices.Equal(ips, want) || len(want) != 3 {
			return false, fmt.Errorf("ingress %v, want %v (IPv4, IPv6, private)", ips, want)
		}

		return true, nil
	})

	web, _ = e.admin.CoreV1().Services("default").Get(ctx, "web", metav1.GetOptions{})

	if lb.LoadBalancerType.Name != "lb21" || lb.Location.Name != "fsn1" || lb.Labels["hcloud-ccm/service-uid"] != string(web.UID) {
		t.Errorf("load balancer %s: type %s in %s labels %v", lb.Name, lb.LoadBalancerType.Name, lb.Location.Name, lb.Labels)
	}

	if len(lb.Targets) != 1 || lb.Targets[0].Server.Server.ID != e.servers["w-1"].ID || !lb.Targets[0].UsePrivateIP {
		t.Errorf("targets %+v, want w-1 only (cp-1 is excluded), through its private IP", lb.Targets)
	}

	ports := map[int]int{}
	for _, s := range lb.Services {
		ports[s.ListenPort] = s.DestinationPort
	}

	if len(ports) != 2 || ports[80] != int(web.Spec.Ports[0].NodePort) || ports[443] != int(web.Spec.Ports[1].NodePort) {
		t.Errorf("services %v, want 80 and 443 to the node ports of %v", ports, web.Spec.Ports)
	}

	waitFor(t, time.Minute, "the Service naming ingress-lb adopts it", func() (bool, error) {
		got, err := e.lbNamed(ctx, "ingress-lb")
		if err != nil || got == nil {
			return false, err
		}

		return got.ID == pre.LoadBalancer.ID && got.Labels["hcloud-ccm/service-uid"] == string(adopt.UID) && got.Labels["owner"] == "terraform" &&
			len(got.Services) == 2 && len(got.Targets) == 1, nil
	})

	if lbs, _ := e.hc.LoadBalancer.All(ctx); len(lbs) != 2 {
		t.Errorf("%d load balancers, want 2 (web's and the adopted one)", len(lbs))
	}

	// Deletion: the finalizer holds the Service until its LB is gone.
	for _, name := range []string{"web", "adopt", "pending"} {
		if err := e.admin.CoreV1().Services("default").Delete(ctx, name, metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
	}

	waitFor(t, time.Minute, "the Services go with their load balancers", func() (bool, error) {
		for _, name := range []string{"web", "adopt", "pending"} {
			if _, err := e.admin.CoreV1().Services("default").Get(ctx, name, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
				return false, err
			}
		}

		lbs, err := e.hc.LoadBalancer.All(ctx)

		return err == nil && len(lbs) == 0, fmt.Errorf("%d load balancers left (%v)", len(lbs), err)
	})

}
