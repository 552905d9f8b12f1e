package kubefake_test

import (
	"fmt"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/ohmytalos/ohmytalos/internal/sandbox/kubefake"
)

var ccnps = schema.GroupVersionResource{Group: "cilium.io", Version: "v2", Resource: "ciliumclusterwidenetworkpolicies"}

func ciliumOperator(args ...string) *appsv1.Deployment {
	labels := map[string]string{"io.cilium/app": "operator"}

	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "cilium-operator", Namespace: "kube-system"},
		Spec: appsv1.DeploymentSpec{
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{
					HostNetwork: true,
					Tolerations: []corev1.Toleration{{Operator: corev1.TolerationOpExists}},
					Containers: []corev1.Container{{Name: "cilium-operator", Image: "quay.io/cilium/operator-generic:v1.19.6",
						Command: []string{"cilium-operator-generic"}, Args: args}},
				},
			},
		},
	}
}

// TestCiliumCRDsComeWithTheOperator: a CiliumClusterwideNetworkPolicy is
// refused until a cilium-operator runs and registers the CRD, and never
// when the operator is told to skip CRD creation.
func TestCiliumCRDsComeWithTheOperator(t *testing.T) {
	ctx := testCtx(t)
	e := newEnv(t, kubefake.Options{})

	if err := e.srv.RegisterNode(kubefake.NodeRegistration{Name: "cp", KubeletVersion: "v1.35.0"}); err != nil {
		t.Fatal(err)
	}

	policy := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "cilium.io/v2", "kind": "CiliumClusterwideNetworkPolicy", "metadata": map[string]any{"name": "deny-metadata"},
		"spec": map[string]any{"endpointSelector": map[string]any{}, "egressDeny": []any{map[string]any{"toCIDR": []any{"169.254.169.254/32"}}}},
	}}
	if _, err := e.dyn.Resource(ccnps).Create(ctx, policy, metav1.CreateOptions{}); !apierrors.IsNotFound(err) {
		t.Fatalf("policy before any operator: %v, want NotFound (kind not served)", err)
	}

	deps := e.cs.AppsV1().Deployments("kube-system")
	if _, err := deps.Create(ctx, ciliumOperator("--skip-crd-creation=true"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	operatorReady := func() (bool, string) {
		d, err := deps.Get(ctx, "cilium-operator", metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}

		return d.Status.ReadyReplicas == 1 && d.Status.ObservedGeneration == d.Generation, fmt.Sprintf("%+v", d.Status)
	}
	eventually(t, ctx, "the operator that skips CRD creation ready", operatorReady)
	e.srv.Sync(ctx)

	if _, err := e.cs.Discovery().ServerResourcesForGroupVersion("cilium.io/v2"); !apierrors.IsNotFound(err) {
		t.Fatalf("cilium.io/v2 with --skip-crd-creation: %v, want NotFound", err)
	}

	d, err := deps.Get(ctx, "cilium-operator", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}

	d.Spec.Template.Spec.Containers[0].Args = nil
	if _, err := deps.Update(ctx, d, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}

	eventually(t, ctx, "the policy accepted once the operator registered the CRD", func() (bool, string) {
		_, err := e.dyn.Resource(ccnps).Create(ctx, policy, metav1.CreateOptions{})
		return err == nil, fmt.Sprint(err)
	})
}
