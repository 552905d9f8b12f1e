package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hetznercloud/hcloud-go/v2/hcloud"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
)

// TestWorkingClusterFromSandboxServe applies the seed cluster with the
// built binary against "sandbox serve" and checks the result with clients
// nobody here wrote: client-go with the kubeconfig ohmytalos wrote, and
// hcloud-go for the servers. Every node is Ready with the provider ID of
// its server, the add-on workloads are ready, a claim binds through the
// default StorageClass and a LoadBalancer Service gets an address.
func TestWorkingClusterFromSandboxServe(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary and a cluster")
	}
	bin := buildBinary(t)
	// The real control plane (the default): the add-ons are Helm
	// releases, and helm needs its OpenAPI documents.
	sb := startServe(t, bin, "--action-duration", "50ms", "--boot-delay", "200ms")
	dir, keyFile := seedDir(t)
	env := sb.environ("OHMYTALOS_AGE_KEY_FILE="+keyFile, "NO_COLOR=1")

	p := startCLI(t, bin, dir, env, "apply", "--json")
	if err := p.wait(5 * time.Minute); err != nil {
		t.Fatalf("apply: %v\n%s", err, tail(p.errb.String(), 3000))
	}
	kc := filepath.Join(t.TempDir(), "kubeconfig")
	if err := startCLI(t, bin, dir, env, "kubeconfig", "--out", kc).wait(time.Minute); err != nil {
		t.Fatalf("kubeconfig --out: %v", err)
	}
	raw, err := os.ReadFile(kc)
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := clientcmd.RESTConfigFromKubeConfig(raw)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(cfg.Host, "10.0.") {
		t.Fatalf("the kubeconfig names the private address %s, which the operator cannot reach", cfg.Host)
	}
	cfg.ContentType = "application/json" // the sandbox API server speaks JSON only
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()

	hc := hcloud.NewClient(hcloud.WithEndpoint(sb.env["HCLOUD_ENDPOINT"]), hcloud.WithToken(sb.env["HCLOUD_TOKEN"]))
	servers, err := hc.Server.All(ctx)
	if err != nil {
		t.Fatal(err)
	}
	ids := map[string]int64{}
	for _, s := range servers {
		ids[s.Name] = s.ID
	}

	nodes, err := cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(nodes.Items) != 5 {
		t.Errorf("%d nodes, want the seed's 5", len(nodes.Items))
	}
	for _, n := range nodes.Items {
		if ready(n) != corev1.ConditionTrue {
			t.Errorf("node %s is not Ready: %v", n.Name, n.Status.Conditions)
		}
		if want := fmt.Sprintf("hcloud://%d", ids[n.Name]); n.Spec.ProviderID != want {
			t.Errorf("node %s provider ID %q, want %q (its server as Hetzner lists it)", n.Name, n.Spec.ProviderID, want)
		}
		for _, taint := range n.Spec.Taints {
			if taint.Key == "node.cloudprovider.kubernetes.io/uninitialized" {
				t.Errorf("node %s keeps the uninitialized taint", n.Name)
			}
		}
	}

	checkReady := func(kind, name string, ready, want int32) {
		if want == 0 || ready != want {
			t.Errorf("%s kube-system/%s: %d of %d ready", kind, name, ready, want)
		}
	}
	ds, err := cs.AppsV1().DaemonSets("kube-system").Get(ctx, "cilium", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	checkReady("DaemonSet", ds.Name, ds.Status.NumberReady, ds.Status.DesiredNumberScheduled)
	for _, name := range []string{"hcloud-cloud-controller-manager", "hcloud-csi-controller"} {
		d, err := cs.AppsV1().Deployments("kube-system").Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		checkReady("Deployment", name, d.Status.ReadyReplicas, replicas(d))
	}

	claimBinds(ctx, t, cs)
	// The claim is a Hetzner volume the CSI driver made, labelled for the
	// cluster (so destroy finds it) and attached to the pod's server.
	// The attach follows the pod's scheduling: wait for it, bounded.
	var vols []*hcloud.Volume
	deadline := time.Now().Add(time.Minute)
	for {
		vols, err = hc.Volume.AllWithOpts(ctx, hcloud.VolumeListOpts{ListOpts: hcloud.ListOpts{LabelSelector: "managed-by=csi-driver,ohmytalos.io/cluster=demo"}})
		if (err == nil && len(vols) == 1 && vols[0].Server != nil) || time.Now().After(deadline) {
			break
		}
		time.Sleep(200 * time.Millisecond)
	}
	if err != nil || len(vols) != 1 || vols[0].Server == nil {
		t.Errorf("CSI volumes %v (%v), want one, attached within a minute", vols, err)
	}
	serviceGetsAddress(ctx, t, cs)
}

func ready(n corev1.Node) corev1.ConditionStatus {
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.Status
		}
	}
	return corev1.ConditionUnknown
}

func replicas(d *appsv1.Deployment) int32 {
	if d.Spec.Replicas == nil {
		return 1
	}
	return *d.Spec.Replicas
}

// claimBinds creates a claim without a class and a pod using it: the
// default StorageClass (the Hetzner CSI driver's) must bind it.
func claimBinds(ctx context.Context, t *testing.T, cs *kubernetes.Clientset) {
	t.Helper()
	pvc := &corev1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Name: "data", Namespace: "default"},
		Spec: corev1.PersistentVolumeClaimSpec{
			AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			Resources:   corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("10Gi")}},
		},
	}
	if _, err := cs.CoreV1().PersistentVolumeClaims("default").Create(ctx, pvc, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	// hcloud-volumes binds on the first consumer (WaitForFirstConsumer),
	// so the volume lands in the location of the pod's node.
	time.Sleep(time.Second)
	if got, err := cs.CoreV1().PersistentVolumeClaims("default").Get(ctx, "data", metav1.GetOptions{}); err != nil || got.Status.Phase == corev1.ClaimBound {
		t.Fatalf("the claim bound before any pod used it (%v)", err)
	}
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "app", Namespace: "default"},
		Spec: corev1.PodSpec{
			Containers: []corev1.Container{{Name: "app", Image: "registry.example/app:1",
				VolumeMounts: []corev1.VolumeMount{{Name: "data", MountPath: "/data"}}}},
			Volumes: []corev1.Volume{{Name: "data", VolumeSource: corev1.VolumeSource{
				PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: "data"}}}},
		},
	}
	if _, err := cs.CoreV1().Pods("default").Create(ctx, pod, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(ctx, t, "the claim bound", func() (bool, string) {
		got, err := cs.CoreV1().PersistentVolumeClaims("default").Get(ctx, "data", metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		p, err := cs.CoreV1().Pods("default").Get(ctx, "app", metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		return got.Status.Phase == corev1.ClaimBound, fmt.Sprintf("claim %s %v; pod on %q %v", got.Status.Phase, got.Annotations, p.Spec.NodeName, p.Status.Conditions)
	})
}

// serviceGetsAddress creates a LoadBalancer Service: the cloud controller
// must give it an address.
func serviceGetsAddress(ctx context.Context, t *testing.T, cs *kubernetes.Clientset) {
	t.Helper()
	svc := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default",
			Annotations: map[string]string{"load-balancer.hetzner.cloud/location": "fsn1"}},
		Spec: corev1.ServiceSpec{
			Type:     corev1.ServiceTypeLoadBalancer,
			Selector: map[string]string{"app": "web"},
			Ports:    []corev1.ServicePort{{Name: "http", Port: 80, Protocol: corev1.ProtocolTCP}},
		},
	}
	if _, err := cs.CoreV1().Services("default").Create(ctx, svc, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(ctx, t, "a load balancer address", func() (bool, string) {
		got, err := cs.CoreV1().Services("default").Get(ctx, "web", metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		return len(got.Status.LoadBalancer.Ingress) > 0, fmt.Sprint(got.Status.LoadBalancer)
	})
}

func eventually(ctx context.Context, t *testing.T, what string, cond func() (bool, string)) {
	t.Helper()
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	for {
		ok, last := cond()
		if ok {
			return
		}
		select {
		case <-ctx.Done():
			t.Fatalf("%s: never happened; last: %s", what, last)
		case <-time.After(100 * time.Millisecond):
		}
	}
}

func tail(s string, n int) string {
	if len(s) > n {
		return s[len(s)-n:]
	}
	return s
}
