package steps

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/ohmytalos/ohmytalos/internal/engine"
	"github.com/ohmytalos/ohmytalos/internal/spec"
)

// The seed cluster applies against the sandbox's real control plane
// (issue 23), and a second apply does nothing.
func TestApplySeedOnRealKubernetes(t *testing.T) {
	t.Parallel()
	w := seedWorld(t, func(*spec.Spec) {})
	if _, err := w.apply(t, context.Background(), func(engine.Event) {}); err != nil {
		t.Fatal(err)
	}
	w.CheckCounts(t)

	// The operator's kubeconfig reaches the real kube-apiserver: it serves
	// the OpenAPI documents helm and kubectl need, and every node is Ready
	// at the cluster's version with its provider ID.
	cs := w.kubeClient(t)
	if _, err := cs.RESTClient().Get().AbsPath("/openapi/v2").Do(context.Background()).Raw(); err != nil {
		t.Fatalf("GET /openapi/v2 through the stored kubeconfig: %v", err)
	}

	nodes, err := cs.CoreV1().Nodes().List(context.Background(), metav1.ListOptions{})
	if err != nil || len(nodes.Items) != 5 {
		t.Fatalf("nodes: %d (%v), want 5", len(nodes.Items), err)
	}

	for _, n := range nodes.Items {
		ready := false
		for _, c := range n.Status.Conditions {
			ready = ready || (c.Type == corev1.NodeReady && c.Status == corev1.ConditionTrue)
		}

		if !ready || n.Status.NodeInfo.KubeletVersion != "v1.36.3" || n.Spec.ProviderID == "" {
			t.Errorf("node %s: ready %v, version %s, provider ID %q", n.Name, ready, n.Status.NodeInfo.KubeletVersion, n.Spec.ProviderID)
		}
	}

	w.applyChangesNothing(t)
}
