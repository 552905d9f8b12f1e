package kubereal

import (
	"context"
	"strconv"
	"strings"

	"github.com/hetznercloud/hcloud-go/v2/hcloud"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// deleteIfGone is the CCM's cloud node lifecycle controller on one node:
// a node whose Ready condition is not True (its kubelet stopped posting
// and the node lifecycle controller turned it Unknown, or it reports
// NotReady) is deleted once its server no longer exists
// (k8s.io/cloud-provider controllers/nodelifecycle/node_lifecycle_controller.go
// MonitorNodes; hetznercloud/hcloud-cloud-controller-manager
// hcloud/instances.go InstanceExists). A Ready node is never looked up.
func (cc *CloudController) deleteIfGone(ctx context.Context, client *hcloud.Client, n *corev1.Node) {
	if nodeReady(n) || !strings.HasPrefix(n.Spec.ProviderID, "hcloud://") {
		return
	}

	id, err := strconv.ParseInt(strings.TrimPrefix(n.Spec.ProviderID, "hcloud://"), 10, 64)
	if err != nil {
		return
	}

	srv, _, err := client.Server.GetByID(ctx, id)
	if err != nil || srv != nil {
		return // an API error is no proof the server is gone
	}

	uid := n.UID
	_ = cc.admin.CoreV1().Nodes().Delete(ctx, n.Name, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &uid}}) //nolint:errcheck // retried next sync
}

func nodeReady(n *corev1.Node) bool {
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.Status == corev1.ConditionTrue
		}
	}

	return false
}
