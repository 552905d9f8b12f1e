//go:build unix

package kubereal_test

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/ohmytalos/ohmytalos/internal/sandbox/kubereal"
)

func nodeReady(ctx context.Context, cs *kubernetes.Clientset, name string) (corev1.ConditionStatus, error) {
	n, err := cs.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return "", err
	}

	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.Status, nil
		}
	}

	return "", nil
}

// cniDaemonSet is a CNI's shape as the kubelet sees it: a DaemonSet in
// kube-system whose pods mount the host's /etc/cni/net.d.
func cniDaemonSet() *appsv1.DaemonSet {
	labels := map[string]string{"k8s-app": "cilium"}

	return &appsv1.DaemonSet{ObjectMeta: metav1.ObjectMeta{Name: "cilium", Namespace: "kube-system"}, Spec: appsv1.DaemonSetSpec{
		Selector: &metav1.LabelSelector{MatchLabels: labels},
		Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels}, Spec: corev1.PodSpec{
			HostNetwork: true,
			Tolerations: []corev1.Toleration{{Operator: corev1.TolerationOpExists}},
			Containers:  []corev1.Container{{Name: "agent", Image: "quay.io/cilium/cilium:v1.18.0"}},
			Volumes: []corev1.Volume{{Name: "cni", VolumeSource: corev1.VolumeSource{
				HostPath: &corev1.HostPathVolumeSource{Path: "/etc/cni/net.d"},
			}}},
		}},
	}}
}

func TestKubeletReadyOnceCNIRuns(t *testing.T) {
	t.Parallel()
	ctx, cp, admin := startAdmin(t)

	startKubelet(t, ctx, cp, kubereal.KubeletConfig{
		Name: "cp-1", Version: "v1.36.3", InternalIP: "10.0.1.1", ExternalIP: "127.1.2.3",
		Labels: map[string]string{"node-role.kubernetes.io/control-plane": "", "node.longhorn.io/create-default-disk": "config"},
	})

	n, err := admin.CoreV1().Nodes().Get(ctx, "cp-1", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}

	if _, ok := n.Labels["node-role.kubernetes.io/control-plane"]; !ok || n.Labels["node.longhorn.io/create-default-disk"] != "config" {
		t.Errorf("node labels = %v, want the control-plane role and the Longhorn label", n.Labels)
	}

	if st, _ := nodeReady(ctx, admin, "cp-1"); st != corev1.ConditionFalse {
		t.Fatalf("node Ready = %q before any CNI runs, want False", st)
	}

	if _, err := admin.AppsV1().DaemonSets("kube-system").Create(ctx, cniDaemonSet(), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	waitFor(t, 2*time.Minute, "cp-1 turns Ready once the CNI DaemonSet's pod runs on it", func() (bool, error) {
		st, err := nodeReady(ctx, admin, "cp-1")

		return st == corev1.ConditionTrue, err
	})

	// The kubelet learns of its pods by watch, as a real one does: its
	// sync loop (every 500 ms) lists nothing. Needs real time: a window of
	// four sync periods in which no LIST of pods reaches the API server.
	// The test's own LIST proves the metric counts them (client-go's
	// informers start with a streaming watch, not a LIST).
	if _, err := admin.CoreV1().Pods("").List(ctx, metav1.ListOptions{}); err != nil {
		t.Fatal(err)
	}

	listed := listPodsRequests(ctx, t, admin)
	if listed == 0 {
		t.Fatal("no LIST pods request counted, not even the test's own: the metric's labels changed")
	}

	time.Sleep(2 * time.Second)

	if n := listPodsRequests(ctx, t, admin) - listed; n != 0 {
		t.Errorf("%v LIST pods requests in 2 s of an idle node, want none (the kubelet watches)", n)
	}

	pods, err := admin.CoreV1().Pods("kube-system").List(ctx, metav1.ListOptions{LabelSelector: "k8s-app=cilium"})
	if err != nil || len(pods.Items) != 1 || pods.Items[0].Status.Phase != corev1.PodRunning || pods.Items[0].Status.PodIP != "10.0.1.1" {
		t.Fatalf("cilium pods = %+v (%v), want one Running on the host network", pods, err)
	}

	// A deleted pod goes once the kubelet confirms it, as a drain needs.
	if err := admin.CoreV1().Pods("kube-system").Delete(ctx, pods.Items[0].Name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}

	waitFor(t, time.Minute, "the kubelet confirms the deleted pod and the DaemonSet replaces it", func() (bool, error) {
		_, err := admin.CoreV1().Pods("kube-system").Get(ctx, pods.Items[0].Name, metav1.GetOptions{})
		if err == nil {
			return false, nil
		}

		l, err := admin.CoreV1().Pods("kube-system").List(ctx, metav1.ListOptions{LabelSelector: "k8s-app=cilium"})

		return err == nil && len(l.Items) == 1 && l.Items[0].Status.Phase == corev1.PodRunning, err
	})
}

// listPodsRequests is the API server's count of LIST pods requests so far
// (apiserver_request_total).
func listPodsRequests(ctx context.Context, t *testing.T, admin *kubernetes.Clientset) float64 {
	t.Helper()

	raw, err := admin.RESTClient().Get().AbsPath("/metrics").DoRaw(ctx)
	if err != nil {
		t.Fatal(err)
	}

	total := 0.0

	for line := range strings.Lines(string(raw)) {
		if !strings.HasPrefix(line, "apiserver_request_total{") || !strings.Contains(line, `resource="pods"`) ||
			!strings.Contains(line, `verb="LIST"`) || !strings.Contains(line, `subresource=""`) {
			continue
		}

		fields := strings.Fields(line)
		if v, err := strconv.ParseFloat(fields[len(fields)-1], 64); err == nil {
			total += v
		}
	}

	return total
}
