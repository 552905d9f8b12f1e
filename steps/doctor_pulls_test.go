package steps

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/ohmytalos/ohmytalos/internal/doctor"
	"github.com/ohmytalos/ohmytalos/internal/sandbox/talosfake"
)

func pinnedPod(name, node, image string) *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"},
		Spec: corev1.PodSpec{NodeName: node, Containers: []corev1.Container{{Name: "app", Image: image}}}}
}

// TestDoctorImagePulls: registry.k8s.io answers a worker 403 (a GeoIP
// block), and an IPv6-only worker (no public IPv4, no IPv4 route) joins
// and cannot reach ghcr.io; the kubelet reports ErrImagePull and
// ImagePullBackOff, and image-pulls names each node with its cause.
func TestDoctorImagePulls(t *testing.T) {
	t.Parallel()
	// The real control plane (the default): helm needs its OpenAPI
	// documents; the registry faults answer its simulated kubelets' pulls.
	c := appliedDoctorCluster(t)
	var worker int64
	var workerCfg []byte
	for _, s := range c.sb.HCloud.Servers() {
		if s.Name == "demo-worker-1" {
			worker, workerCfg = s.ID, []byte(s.UserData)
		}
	}
	if worker == 0 {
		t.Fatal("no server demo-worker-1 in the sandbox")
	}
	if err := c.sb.Talos.SetRegistryFault(worker, talosfake.RegistryFault{Forbidden: []string{"registry.k8s.io"}}); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	n, err := c.sb.Talos.StartNode(ctx, talosfake.NodeOptions{ServerID: 9101, Name: "v6-only", PublicIPv6: "2001:db8:1::1",
		PrivateIP: "10.0.2.93", NetworkCIDR: "10.0.0.0/16", MachineConfig: workerCfg})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(n.Stop)
	cs := c.kubeClient(t)
	waitForWithin(t, time.Minute, "the IPv6-only node registered", func() (bool, string) {
		_, err := cs.CoreV1().Nodes().Get(ctx, "v6-only", metav1.GetOptions{})
		return err == nil, fmt.Sprint(err)
	})
	for _, p := range []*corev1.Pod{
		pinnedPod("agnhost", "demo-worker-1", "registry.k8s.io/e2e-test-images/agnhost:2.53"),
		pinnedPod("flannel", "v6-only", "ghcr.io/siderolabs/flannel:v0.26.0"),
		pinnedPod("ok", "demo-worker-2", "registry.k8s.io/e2e-test-images/agnhost:2.53"),
	} {
		if _, err := cs.CoreV1().Pods("default").Create(ctx, p, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	waitForWithin(t, time.Minute, "both pulls backing off", func() (bool, string) {
		var got []string
		for _, name := range []string{"agnhost", "flannel"} {
			p, err := cs.CoreV1().Pods("default").Get(ctx, name, metav1.GetOptions{})
			if err != nil || len(p.Status.ContainerStatuses) == 0 || p.Status.ContainerStatuses[0].State.Waiting == nil ||
				p.Status.ContainerStatuses[0].State.Waiting.Reason != "ImagePullBackOff" {
				return false, fmt.Sprint(name, " ", err, " ", p.Status)
			}
			got = append(got, p.Status.ContainerStatuses[0].State.Waiting.Message)
		}
		return true, strings.Join(got, "; ")
	})
	evs, err := cs.CoreV1().Events("default").List(ctx, metav1.ListOptions{FieldSelector: "involvedObject.name=agnhost,reason=Failed"})
	if err != nil || len(evs.Items) == 0 || !strings.HasPrefix(evs.Items[0].Message, `Failed to pull image "registry.k8s.io/e2e-test-images/agnhost:2.53": rpc error`) {
		t.Errorf("kubelet's Failed event on agnhost: %v %v", evs, err)
	}
	r := c.doctorResults(t, "image-pulls")["image-pulls"]
	if r.Status != doctor.StatusFail {
		t.Fatalf("image-pulls = %s, want fail: %s", r.Status, describeResult(r))
	}
	all := strings.Join(r.Evidence, "\n") + "\n" + r.Fix
	for _, want := range []string{"demo-worker-1 (", "registry.k8s.io answers 403 Forbidden: GeoIP block: replace this server",
		"v6-only: ghcr.io is unreachable: the node has no IPv4 egress (IPv6-only) and ghcr.io has no IPv6",
		`Back-off pulling image "ghcr.io/siderolabs/flannel:v0.26.0": ErrImagePull: rpc error`, "replace server demo-worker-1"} {
		if !strings.Contains(all, want) {
			t.Errorf("image-pulls lacks %q: %s", want, describeResult(r))
		}
	}
	if strings.Contains(all, "default/ok ") {
		t.Errorf("image-pulls reports the pod on the unblocked worker: %s", describeResult(r))
	}
}
