//go:build unix

package kubereal_test

import (
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/ohmytalos/ohmytalos/internal/sandbox/kubereal"
)

// The real API server does not serve Cilium's kinds until the simulated
// cilium-operator has registered them, and it does so only once a Ready
// operator pod runs without --skip-crd-creation.
func TestCiliumOperatorRegistersItsCRDs(t *testing.T) {
	t.Parallel()
	ctx, cp, admin := startAdmin(t)

	startKubelet(t, ctx, cp, kubereal.KubeletConfig{Name: "cp-1", Version: "v1.36.3", InternalIP: "10.0.1.1"})

	op, err := cp.StartCiliumOperator(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer op.Stop()

	served := func() bool {
		_, err := admin.Discovery().ServerResourcesForGroupVersion("cilium.io/v2")
		return err == nil
	}

	waitServiceAccount(t, ctx, admin, "kube-system")

	d := deployment("kube-system", "cilium-operator", 1, map[string]string{"app": "cilium-operator"}, corev1.PodSpec{
		HostNetwork: true,
		Tolerations: []corev1.Toleration{{Operator: corev1.TolerationOpExists}},
		Containers: []corev1.Container{{Name: "operator", Image: "quay.io/cilium/operator-generic:v1.19.6",
			Args: []string{"--skip-crd-creation"}}},
	})
	if _, err := admin.AppsV1().Deployments("kube-system").Create(ctx, d, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	// An operator told to skip them registers nothing.
	waitFor(t, 2*time.Minute, "the operator pod that skips CRD creation runs", func() (bool, error) {
		pods, err := admin.CoreV1().Pods("kube-system").List(ctx, metav1.ListOptions{LabelSelector: "app=cilium-operator"})
		return err == nil && len(pods.Items) == 1 && pods.Items[0].Status.Phase == corev1.PodRunning, err
	})
	time.Sleep(3 * time.Second)
	if served() {
		t.Fatal("cilium.io/v2 is served although the operator runs with --skip-crd-creation")
	}

	d, err = admin.AppsV1().Deployments("kube-system").Get(ctx, "cilium-operator", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	d.Spec.Template.Spec.Containers[0].Args = nil
	if _, err := admin.AppsV1().Deployments("kube-system").Update(ctx, d, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}

	waitFor(t, 2*time.Minute, "the operator registers cilium.io/v2 with CiliumClusterwideNetworkPolicy", func() (bool, error) {
		rs, err := admin.Discovery().ServerResourcesForGroupVersion("cilium.io/v2")
		if err != nil {
			return false, nil //nolint:nilerr // not served yet
		}
		for _, r := range rs.APIResources {
			if strings.EqualFold(r.Kind, "CiliumClusterwideNetworkPolicy") {
				return true, nil
			}
		}
		return false, nil
	})
}
