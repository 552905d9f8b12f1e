package steps

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/ohmytalos/ohmytalos/internal/doctor"
	"github.com/ohmytalos/ohmytalos/internal/engine"
)

// kubeClient is client-go on the kubeconfig bootstrap stored.
func (c *doctorCluster) kubeClient(t *testing.T) *kubernetes.Clientset {
	t.Helper()
	return kubeClientOf(t, c.env)
}

// kubeClientOf is client-go on the kubeconfig env's state stores: the
// operator's view.
func kubeClientOf(t *testing.T, env *engine.Env) *kubernetes.Clientset {
	t.Helper()
	cfg, err := clientcmd.RESTConfigFromKubeConfig(storedSecret(t, env, secretKubeconfig))
	if err != nil {
		t.Fatal(err)
	}
	cfg.ContentType = "application/json" // the sandbox's API server speaks JSON only
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return cs
}

// waitFor polls cond until it holds or 20 seconds pass.
func waitFor(t *testing.T, what string, cond func() (bool, string)) {
	t.Helper()
	waitForWithin(t, 20*time.Second, what, cond)
}

// waitForWithin is waitFor with its own limit, for what a real control
// plane's controllers do on a busy machine.
func waitForWithin(t *testing.T, limit time.Duration, what string, cond func() (bool, string)) {
	t.Helper()
	deadline := time.Now().Add(limit)
	for {
		ok, last := cond()
		if ok {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %s waiting for %s; last: %s", limit, what, last)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func lbKubeService(name string, ann map[string]string) *corev1.Service {
	return &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default", Annotations: ann},
		Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeLoadBalancer, Selector: map[string]string{"app": name},
			Ports: []corev1.ServicePort{{Name: "http", Port: 80, Protocol: corev1.ProtocolTCP}}},
	}
}

// TestDoctorLBPending is the true positive of hcloud-ccm #1070. The seed
// cluster's cloud controller has a default location
// (HCLOUD_LOAD_BALANCERS_LOCATION), so a Service without the annotation
// gets its address; a controller without one (the operator's own, here
// the seed's with the variable removed) leaves such a Service <pending>
// with its SyncLoadBalancerFailed event, and lb-pending names the
// annotation and the variable.
func TestDoctorLBPending(t *testing.T) {
	t.Parallel()
	// The real control plane (the default): helm needs its OpenAPI
	// documents; the simulated CCM's service controller
	// (kubereal/servicecontroller.go) reads the running pod's environment.
	c := appliedDoctorCluster(t)
	cs := c.kubeClient(t)
	ctx := context.Background()
	if _, err := cs.CoreV1().Services("default").Create(ctx, lbKubeService("shop", nil), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitForWithin(t, time.Minute, "an address on default/shop from the seed's controller", func() (bool, string) {
		shop, err := cs.CoreV1().Services("default").Get(ctx, "shop", metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		return len(shop.Status.LoadBalancer.Ingress) > 0, fmt.Sprint(shop.Status)
	})
	dep, err := cs.AppsV1().Deployments("kube-system").Get(ctx, "hcloud-cloud-controller-manager", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ctr := &dep.Spec.Template.Spec.Containers[0]
	ctr.Env = slices.DeleteFunc(ctr.Env, func(e corev1.EnvVar) bool { return e.Name == doctor.EnvLBLocation })
	if _, err := cs.AppsV1().Deployments("kube-system").Update(ctx, dep, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	// The Deployment rolls out as a real one does: the old pod, with the
	// variable, stays Ready until the new one is, and serves a Service
	// created meanwhile. The new controller alone must see default/web.
	waitForWithin(t, 90*time.Second, "the cloud controller rolled out without "+doctor.EnvLBLocation, func() (bool, string) {
		return ccmRolledOutWithout(ctx, cs, doctor.EnvLBLocation)
	})
	if _, err := cs.CoreV1().Services("default").Create(ctx, lbKubeService("web", nil), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitForWithin(t, time.Minute, "the controller's event on default/web", func() (bool, string) {
		evs, err := cs.CoreV1().Events("default").List(ctx, metav1.ListOptions{FieldSelector: "involvedObject.name=web,reason=SyncLoadBalancerFailed"})
		shop, serr := cs.CoreV1().Services("default").Get(ctx, "shop", metav1.GetOptions{})
		if err != nil || serr != nil {
			return false, fmt.Sprint(err, serr)
		}
		return len(evs.Items) > 0 && len(shop.Status.LoadBalancer.Ingress) > 0, fmt.Sprint(evs.Items, shop.Status)
	})
	r := c.doctorResults(t, "lb-pending")["lb-pending"]
	if r.Status != doctor.StatusFail {
		t.Fatalf("lb-pending = %s, want fail: %s", r.Status, describeResult(r))
	}
	all := strings.Join(r.Evidence, "\n") + "\n" + r.Fix
	for _, want := range []string{"default/web has no address", doctor.AnnLBLocation, doctor.EnvLBLocation,
		"Error syncing load balancer: failed to ensure load balancer: hcloud/loadBalancers.EnsureLoadBalancer: hcops/LoadBalancerOps.Create: neither",
		"default/shop: address "} {
		if !strings.Contains(all, want) {
			t.Errorf("lb-pending lacks %q: %s", want, describeResult(r))
		}
	}
	if strings.Contains(strings.Join(r.Evidence, "\n"), "default/shop has no address") {
		t.Errorf("lb-pending reports the annotated Service: %s", describeResult(r))
	}
}

// ccmRolledOutWithout reports whether the cloud controller's Deployment
// finished its rollout (every replica updated and available, no old pod
// left, terminating ones included) and none of its pods sets env.
func ccmRolledOutWithout(ctx context.Context, cs kubernetes.Interface, env string) (bool, string) {
	dep, err := cs.AppsV1().Deployments("kube-system").Get(ctx, "hcloud-cloud-controller-manager", metav1.GetOptions{})
	if err != nil {
		return false, err.Error()
	}
	st, want := dep.Status, int32(1)
	if dep.Spec.Replicas != nil {
		want = *dep.Spec.Replicas
	}
	if st.ObservedGeneration < dep.Generation || st.UpdatedReplicas != want || st.AvailableReplicas != want || st.Replicas != want {
		return false, fmt.Sprintf("deployment generation %d observed %d, replicas %d updated %d available %d (want %d)",
			dep.Generation, st.ObservedGeneration, st.Replicas, st.UpdatedReplicas, st.AvailableReplicas, want)
	}
	sel, err := metav1.LabelSelectorAsSelector(dep.Spec.Selector)
	if err != nil {
		return false, err.Error()
	}
	pods, err := cs.CoreV1().Pods("kube-system").List(ctx, metav1.ListOptions{LabelSelector: sel.String()})
	if err != nil {
		return false, err.Error()
	}
	for _, p := range pods.Items {
		if slices.ContainsFunc(p.Spec.Containers[0].Env, func(e corev1.EnvVar) bool { return e.Name == env }) {
			return false, fmt.Sprintf("pod %s (%s) still sets %s", p.Name, p.Status.Phase, env)
		}
	}
	return len(pods.Items) == int(want), fmt.Sprintf("%d pods, want %d", len(pods.Items), want)
}
