package kubefake_test

import (
	"fmt"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/ohmytalos/ohmytalos/internal/sandbox/kubefake"
)

func TestOwnedLabelsAndTaintsFollowTheOS(t *testing.T) {
	ctx := testCtx(t)
	e := newEnv(t, kubefake.Options{})

	reg := kubefake.NodeRegistration{
		Name: "n", KubeletVersion: "v1.35.0", ExternalCloudProvider: true,
		Labels: map[string]string{"pool": "a"}, Taints: []kubefake.Taint{{Key: "dedicated", Value: "db", Effect: "NoSchedule"}},
		OwnedLabelsAnnotation: "talos.dev/owned-labels", OwnedTaintsAnnotation: "talos.dev/owned-taints",
	}
	if err := e.srv.RegisterNode(reg); err != nil {
		t.Fatal(err)
	}

	reg.Labels = map[string]string{"pool": "b", "zone": "z"}
	reg.Taints = nil
	reg.KubeletVersion = "v1.35.1"

	if err := e.srv.RegisterNode(reg); err != nil {
		t.Fatal(err)
	}

	e.srv.Sync(ctx)

	n, err := e.cs.CoreV1().Nodes().Get(ctx, "n", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}

	if n.Labels["pool"] != "b" || n.Labels["zone"] != "z" || n.Labels["kubernetes.io/hostname"] != "n" || n.Status.NodeInfo.KubeletVersion != "v1.35.1" {
		t.Fatalf("labels %v, kubelet %s", n.Labels, n.Status.NodeInfo.KubeletVersion)
	}

	for _, tt := range n.Spec.Taints {
		if tt.Key == "dedicated" {
			t.Fatalf("a taint the OS stopped managing stayed: %v", n.Spec.Taints)
		}
	}

	if !hasTaint(n, "node.cloudprovider.kubernetes.io/uninitialized") || !hasTaint(n, "node.kubernetes.io/not-ready") {
		t.Fatalf("taints: %v", n.Spec.Taints)
	}

	// A settled cluster does not churn: the loop and the kubelet write nothing new.
	for range 3 {
		if err := e.srv.RegisterNode(reg); err != nil {
			t.Fatal(err)
		}

		e.srv.Sync(ctx)
	}

	again, err := e.cs.CoreV1().Nodes().Get(ctx, "n", metav1.GetOptions{})
	if err != nil || again.ResourceVersion != n.ResourceVersion {
		t.Fatalf("node rewritten without a change: rv %s -> %s (%v)", n.ResourceVersion, again.ResourceVersion, fmt.Sprint(err))
	}
}
