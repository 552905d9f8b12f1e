package kubefake_test

import (
	"fmt"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/ohmytalos/ohmytalos/internal/sandbox/kubefake"
)

// A node that registered again after its server's Node was deleted, and
// whose server is gone before the cloud controller initialised it (no
// provider ID), is found gone by its name and deleted, as the cloud node
// lifecycle controller does; a node whose server exists stays.
func TestLifecycleDeletesUninitialisedNodeOfAGoneServer(t *testing.T) {
	ctx := testCtx(t)
	endpoint, _ := hetzner(t, ctx, "w-1")
	e := newEnv(t, kubefake.Options{HCloudEndpoint: endpoint})

	for _, name := range []string{"w-1", "ghost"} {
		if err := e.srv.RegisterNode(kubefake.NodeRegistration{Name: name, KubeletVersion: "v1.35.0", ExternalCloudProvider: true}); err != nil {
			t.Fatal(err)
		}
	}

	e.srv.StopKubelet("ghost")

	if _, err := e.cs.CoreV1().Secrets("kube-system").Create(ctx, &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "hcloud"}, StringData: map[string]string{"token": "good", "network": "k8s"},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	if _, err := e.cs.AppsV1().DaemonSets("kube-system").Create(ctx, cniDaemonSet(), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	for _, d := range []*appsv1.Deployment{ccmDeployment()} {
		if _, err := e.cs.AppsV1().Deployments("kube-system").Create(ctx, d, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}

	eventually(t, ctx, "ghost deleted by the cloud node lifecycle controller", func() (bool, string) {
		_, err := e.cs.CoreV1().Nodes().Get(ctx, "ghost", metav1.GetOptions{})

		return apierrors.IsNotFound(err), fmt.Sprint(err)
	})

	eventually(t, ctx, "w-1 initialised and kept", func() (bool, string) {
		n, err := e.cs.CoreV1().Nodes().Get(ctx, "w-1", metav1.GetOptions{})

		return err == nil && n.Spec.ProviderID != "", fmt.Sprint(err)
	})
}
