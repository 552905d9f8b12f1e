//go:build unix

package kubereal_test

import (
	"fmt"
	"net/http/httptest"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/hetznercloud/hcloud-go/v2/hcloud"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/ohmytalos/ohmytalos/internal/sandbox/hcloudfake"
	"github.com/ohmytalos/ohmytalos/internal/sandbox/kubereal"
)

const hcloudToken = "sandboxtokensandboxtokensandboxtokensandboxtokensandboxtoken1234"

// The simulated CCM initializes a node only while the CCM pod runs, with
// the token of its Secret, from the server Hetzner reports.
func TestCloudControllerInitializesNodes(t *testing.T) {
	t.Parallel()
	ctx, cp, admin := startAdmin(t)

	hc := httptest.NewServer(hcloudfake.New(hcloudfake.Options{Token: hcloudToken}))
	defer hc.Close()

	c := hcloud.NewClient(hcloud.WithEndpoint(hc.URL), hcloud.WithToken(hcloudToken))
	res, _, err := c.Server.Create(ctx, hcloud.ServerCreateOpts{Name: "worker-1", ServerType: &hcloud.ServerType{Name: "cpx22"},
		Image: &hcloud.Image{Name: "debian-12"}, Location: &hcloud.Location{Name: "fsn1"}})
	if err != nil {
		t.Fatal(err)
	}

	uninit := corev1.Taint{Key: "node.cloudprovider.kubernetes.io/uninitialized", Value: "true", Effect: corev1.TaintEffectNoSchedule}

	startKubelet(t, ctx, cp, kubereal.KubeletConfig{Name: "worker-1", Version: "v1.36.3", InternalIP: "10.0.2.1", Taints: []corev1.Taint{uninit}})

	cc, err := cp.StartCloudController(ctx, hc.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer cc.Stop()

	// Without a CCM pod the node stays uninitialized.
	time.Sleep(2 * time.Second)

	if n, err := admin.CoreV1().Nodes().Get(ctx, "worker-1", metav1.GetOptions{}); err != nil || n.Spec.ProviderID != "" {
		t.Fatalf("node before the CCM runs: provider ID %q (%v), want none", n.Spec.ProviderID, err)
	}

	sec := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "hcloud", Namespace: "kube-system"}, StringData: map[string]string{"token": hcloudToken}}
	if _, err := admin.CoreV1().Secrets("kube-system").Create(ctx, sec, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	waitServiceAccount(t, ctx, admin, "kube-system")

	d := deployment("kube-system", "hcloud-cloud-controller-manager", 1, map[string]string{"app": "hcloud-cloud-controller-manager"}, corev1.PodSpec{
		// The hcloud CCM chart's: it runs before a CNI, on the host network.
		HostNetwork: true,
		Tolerations: []corev1.Toleration{{Key: uninit.Key, Operator: corev1.TolerationOpExists}, {Key: "node.kubernetes.io/not-ready", Operator: corev1.TolerationOpExists}},
		Containers: []corev1.Container{{Name: "ccm", Image: "docker.io/hetznercloud/hcloud-cloud-controller-manager:v1.26.0",
			Env: []corev1.EnvVar{{Name: "HCLOUD_TOKEN", ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{
				LocalObjectReference: corev1.LocalObjectReference{Name: "hcloud"}, Key: "token"}}}}}},
	})

	if _, err := admin.AppsV1().Deployments("kube-system").Create(ctx, d, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	want := "hcloud://" + itoa(res.Server.ID)

	waitFor(t, 2*time.Minute, "the CCM gives worker-1 its provider ID and lifts the uninitialized taint", func() (bool, error) {
		n, err := admin.CoreV1().Nodes().Get(ctx, "worker-1", metav1.GetOptions{})
		if err != nil {
			return false, err
		}

		if pods, err := admin.CoreV1().Pods("kube-system").List(ctx, metav1.ListOptions{LabelSelector: "app=hcloud-cloud-controller-manager"}); err == nil && len(pods.Items) == 1 && pods.Items[0].Status.Phase != corev1.PodRunning {
			return false, fmt.Errorf("CCM pod %s: %v", pods.Items[0].Status.Phase, pods.Items[0].Status.Conditions)
		}

		return n.Spec.ProviderID == want && !slices.ContainsFunc(n.Spec.Taints, func(t corev1.Taint) bool { return t.Key == uninit.Key }) &&
			n.Labels["node.kubernetes.io/instance-type"] == "cpx22" && n.Labels["topology.kubernetes.io/zone"] == "fsn1", nil
	})
}

func itoa(i int64) string { return strconv.FormatInt(i, 10) }
