//go:build unix

package kubereal_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	authv1 "k8s.io/api/authorization/v1"
	coordv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/ohmytalos/ohmytalos/internal/sandbox/kubereal"
	"github.com/ohmytalos/ohmytalos/internal/sandbox/kubereal/kubetest"
)

// startCluster runs a control plane configured from a fresh secrets bundle
// and the machine config Talos' own generator makes from it (kubetest).
func startCluster(t *testing.T, ctx context.Context) *kubereal.ControlPlane {
	t.Helper()

	binaries(t) // skips without go, fails when TestMain's build failed

	return kubetest.Start(t, ctx, "real")
}

// startAdmin runs a control plane until the test ends, and returns a
// context that ends with the test, the control plane and an admin client.
func startAdmin(t *testing.T) (context.Context, *kubereal.ControlPlane, *kubernetes.Clientset) {
	t.Helper()

	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)

	cp := startCluster(t, ctx)
	admin, _ := clientFor(t, cp, "admin", "system:masters")

	return ctx, cp, admin
}

// startKubelet runs a simulated kubelet on cp until the test ends.
func startKubelet(t *testing.T, ctx context.Context, cp *kubereal.ControlPlane, cfg kubereal.KubeletConfig) *kubereal.Kubelet {
	t.Helper()

	k, err := cp.StartKubelet(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}

	t.Cleanup(k.Stop)

	return k
}

// deployment is a Deployment of replicas pods of spec, labelled and
// selected by labels.
func deployment(ns, name string, replicas int32, labels map[string]string, spec corev1.PodSpec) *appsv1.Deployment {
	return &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns}, Spec: appsv1.DeploymentSpec{
		Replicas: &replicas, Selector: &metav1.LabelSelector{MatchLabels: labels},
		Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels}, Spec: spec},
	}}
}

// clientFor is a client-go client authenticated as cn in orgs.
func clientFor(t *testing.T, cp *kubereal.ControlPlane, cn string, orgs ...string) (*kubernetes.Clientset, *rest.Config) {
	t.Helper()

	crt, key, err := cp.ClientCert(cn, orgs...)
	if err != nil {
		t.Fatal(err)
	}

	cfg := &rest.Config{Host: cp.URL, TLSClientConfig: rest.TLSClientConfig{CAData: cp.CACert(), CertData: crt, KeyData: key}}

	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}

	return cs, cfg
}

func TestRealControlPlane(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()

	cp := startCluster(t, ctx)
	admin, _ := clientFor(t, cp, "admin", "system:masters")

	t.Run("discovery and openapi", func(t *testing.T) { testDiscovery(t, ctx, admin) })
	t.Run("node table", func(t *testing.T) { testNodeTable(t, ctx, cp, admin) })
	t.Run("can-i", func(t *testing.T) { testCanI(t, ctx, cp, admin) })
	t.Run("pod security", func(t *testing.T) { testPodSecurity(t, ctx, admin) })
	t.Run("deployment scheduled", func(t *testing.T) { testDeployment(t, ctx, admin) })

	logRSS(t, cp)

	// Cancelling the context ends every process: none is left running.
	procs := cp.Processes()
	cancel()

	select {
	case <-cp.Done():
	case <-time.After(30 * time.Second):
		t.Fatal("the control plane did not stop within 30s of its context's end")
	}

	for _, p := range procs {
		if err := syscall.Kill(p.PID, 0); err == nil {
			t.Errorf("%s (pid %d) still runs after the context ended", p.Name, p.PID)
		}
	}
}

func testDiscovery(t *testing.T, ctx context.Context, admin *kubernetes.Clientset) {
	v, err := admin.Discovery().ServerVersion()
	if err != nil {
		t.Fatal(err)
	}

	if v.GitVersion != "v1.36.3" || v.Major != "1" || v.Minor != "36" {
		t.Errorf("server version = %s (major %q, minor %q), want v1.36.3", v.GitVersion, v.Major, v.Minor)
	}

	groups, resources, err := admin.Discovery().ServerGroupsAndResources()
	if err != nil {
		t.Fatal(err)
	}

	if len(groups) < 15 || len(resources) < 20 {
		t.Errorf("discovery lists %d groups and %d group versions, want a full server's", len(groups), len(resources))
	}

	for _, path := range []string{"/openapi/v2", "/openapi/v3", "/openapi/v3/apis/apps/v1"} {
		raw, err := admin.RESTClient().Get().AbsPath(path).Do(ctx).Raw()
		if err != nil {
			t.Errorf("GET %s: %v", path, err)

			continue
		}

		if !json.Valid(raw) || len(raw) < 10000 {
			t.Errorf("GET %s answered %d bytes, want an OpenAPI document", path, len(raw))
		}
	}
}

// registerNode does what a kubelet does at start with its own credentials
// (system:node:NAME in system:nodes, as NodeRestriction requires): create
// its Node, report it Ready, and hold its Lease.
func registerNode(t *testing.T, ctx context.Context, kubelet *kubernetes.Clientset, name, ip string) {
	t.Helper()

	capacity := corev1.ResourceList{
		corev1.ResourceCPU: resource.MustParse("4"), corev1.ResourceMemory: resource.MustParse("8Gi"), corev1.ResourcePods: resource.MustParse("110"),
	}
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"kubernetes.io/hostname": name, "kubernetes.io/os": "linux"}}}

	node, err := kubelet.CoreV1().Nodes().Create(ctx, node, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("kubelet registers its node: %v", err)
	}

	now := metav1.Now()
	node.Status = corev1.NodeStatus{
		Capacity: capacity, Allocatable: capacity,
		Addresses:  []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: ip}, {Type: corev1.NodeHostName, Address: name}},
		Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue, Reason: "KubeletReady", LastHeartbeatTime: now, LastTransitionTime: now}},
		NodeInfo: corev1.NodeSystemInfo{KubeletVersion: "v1.36.3", OSImage: "Talos (v1.13.9)", KernelVersion: "6.18.0-talos",
			ContainerRuntimeVersion: "containerd://2.1.0", OperatingSystem: "linux", Architecture: "amd64"},
	}

	if _, err := kubelet.CoreV1().Nodes().UpdateStatus(ctx, node, metav1.UpdateOptions{}); err != nil {
		t.Fatalf("kubelet reports its status: %v", err)
	}

	holder, dur := name, int32(40)
	lease := &coordv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "kube-node-lease"},
		Spec: coordv1.LeaseSpec{HolderIdentity: &holder, LeaseDurationSeconds: &dur, RenewTime: &metav1.MicroTime{Time: time.Now()}}}

	if _, err := kubelet.CoordinationV1().Leases("kube-node-lease").Create(ctx, lease, metav1.CreateOptions{}); err != nil {
		t.Fatalf("kubelet takes its lease: %v", err)
	}

	// Renew the lease and post the Ready condition's heartbeat as the
	// kubelet does, so the node lifecycle controller keeps the node Ready
	// however long a busy machine makes the test (it marks a node Unknown
	// and taints it after --node-monitor-grace-period without either).
	go func() {
		for {
			select {
			case <-ctx.Done():
				return
			case <-time.After(5 * time.Second):
			}

			if l, err := kubelet.CoordinationV1().Leases("kube-node-lease").Get(ctx, name, metav1.GetOptions{}); err == nil {
				l.Spec.RenewTime = &metav1.MicroTime{Time: time.Now()}
				_, _ = kubelet.CoordinationV1().Leases("kube-node-lease").Update(ctx, l, metav1.UpdateOptions{})
			}

			heartbeat(ctx, kubelet, name)
		}
	}()
}

// heartbeat sets the node's Ready condition True with a fresh heartbeat.
func heartbeat(ctx context.Context, kubelet *kubernetes.Clientset, name string) {
	n, err := kubelet.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return
	}

	now := metav1.Now()
	for i, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			if c.Status != corev1.ConditionTrue {
				n.Status.Conditions[i].Status, n.Status.Conditions[i].LastTransitionTime = corev1.ConditionTrue, now
			}

			n.Status.Conditions[i].LastHeartbeatTime, n.Status.Conditions[i].Reason = now, "KubeletReady"
		}
	}

	_, _ = kubelet.CoreV1().Nodes().UpdateStatus(ctx, n, metav1.UpdateOptions{})
}

func testNodeTable(t *testing.T, ctx context.Context, cp *kubereal.ControlPlane, admin *kubernetes.Clientset) {
	kubelet, _ := clientFor(t, cp, "system:node:worker-1", "system:nodes")
	registerNode(t, ctx, kubelet, "worker-1", "10.0.2.1")

	// A kubelet may not create another node's object (NodeRestriction).
	other := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "worker-2"}}
	if _, err := kubelet.CoreV1().Nodes().Create(ctx, other, metav1.CreateOptions{}); err == nil {
		t.Error("worker-1's kubelet created node worker-2; NodeRestriction should refuse it")
	}

	table := kubetest.NodeTable(t, ctx, admin)
	cols := map[string]int{}
	for i, c := range table.ColumnDefinitions {
		cols[strings.ToUpper(c.Name)] = i
	}

	for _, c := range []string{"NAME", "STATUS", "ROLES", "AGE", "VERSION", "INTERNAL-IP", "EXTERNAL-IP", "OS-IMAGE", "KERNEL-VERSION", "CONTAINER-RUNTIME"} {
		if _, ok := cols[c]; !ok {
			t.Errorf("node table lacks column %s (has %v)", c, cols)
		}
	}

	if len(table.Rows) != 1 {
		t.Fatalf("node table has %d rows, want 1", len(table.Rows))
	}

	row := table.Rows[0].Cells
	for col, want := range map[string]string{"NAME": "worker-1", "STATUS": "Ready", "VERSION": "v1.36.3", "INTERNAL-IP": "10.0.2.1"} {
		if got, _ := row[cols[col]].(string); got != want {
			t.Errorf("node table %s = %q, want %q", col, got, want)
		}
	}
}

func testCanI(t *testing.T, ctx context.Context, cp *kubereal.ControlPlane, admin *kubernetes.Clientset) {
	review := func(cs *kubernetes.Clientset, verb, res string) bool {
		t.Helper()

		r, err := cs.AuthorizationV1().SelfSubjectAccessReviews().Create(ctx, &authv1.SelfSubjectAccessReview{
			Spec: authv1.SelfSubjectAccessReviewSpec{ResourceAttributes: &authv1.ResourceAttributes{Verb: verb, Resource: res, Group: "apps", Namespace: "default"}},
		}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}

		return r.Status.Allowed
	}

	if !review(admin, "create", "deployments") {
		t.Error("admin (system:masters) may not create deployments")
	}

	kubelet, _ := clientFor(t, cp, "system:node:worker-1", "system:nodes")
	if review(kubelet, "create", "deployments") {
		t.Error("a kubelet may create deployments; RBAC and Node authorization should refuse")
	}
}

// waitFor polls cond every 250ms until it holds or timeout passes.
func waitFor(t *testing.T, timeout time.Duration, what string, cond func() (bool, error)) {
	t.Helper()

	deadline := time.Now().Add(timeout)

	for {
		ok, err := cond()
		if ok {
			return
		}

		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %s (last error: %v)", what, timeout, err)
		}

		time.Sleep(250 * time.Millisecond)
	}
}

func waitServiceAccount(t *testing.T, ctx context.Context, admin *kubernetes.Clientset, ns string) {
	t.Helper()
	waitFor(t, 2*time.Minute, "the controller manager creates the default service account in "+ns, func() (bool, error) {
		_, err := admin.CoreV1().ServiceAccounts(ns).Get(ctx, "default", metav1.GetOptions{})

		return err == nil, err
	})
}

func privilegedPod(name string) *corev1.Pod {
	priv := true

	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: corev1.PodSpec{Containers: []corev1.Container{{
		Name: "c", Image: "registry.k8s.io/pause:3.10", SecurityContext: &corev1.SecurityContext{Privileged: &priv},
	}}}}
}

func testPodSecurity(t *testing.T, ctx context.Context, admin *kubernetes.Clientset) {
	waitServiceAccount(t, ctx, admin, "default")
	waitServiceAccount(t, ctx, admin, "kube-system")

	_, err := admin.CoreV1().Pods("default").Create(ctx, privilegedPod("priv"), metav1.CreateOptions{})
	if err == nil || !strings.Contains(err.Error(), `violates PodSecurity "baseline:latest"`) {
		t.Errorf("privileged pod in default = %v, want PodSecurity baseline refusal", err)
	}

	if _, err := admin.CoreV1().Pods("kube-system").Create(ctx, privilegedPod("priv"), metav1.CreateOptions{}); err != nil {
		t.Errorf("privileged pod in kube-system (exempt): %v", err)
	}
}

func testDeployment(t *testing.T, ctx context.Context, admin *kubernetes.Clientset) {
	d := deployment("", "web", 2, map[string]string{"app": "web"}, corev1.PodSpec{
		Containers: []corev1.Container{{Name: "web", Image: "nginx:1.29"}},
	})

	if _, err := admin.AppsV1().Deployments("default").Create(ctx, d, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	waitFor(t, 2*time.Minute, "deployment web gets a ReplicaSet and 2 pods scheduled to worker-1", func() (bool, error) {
		rs, err := admin.AppsV1().ReplicaSets("default").List(ctx, metav1.ListOptions{LabelSelector: "app=web"})
		if err != nil || len(rs.Items) != 1 || len(rs.Items[0].OwnerReferences) != 1 || rs.Items[0].OwnerReferences[0].Name != "web" {
			return false, err
		}

		pods, err := admin.CoreV1().Pods("default").List(ctx, metav1.ListOptions{LabelSelector: "app=web"})
		if err != nil || len(pods.Items) != 2 {
			return false, err
		}

		for _, p := range pods.Items {
			if p.Spec.NodeName != "worker-1" {
				return false, nil
			}
		}

		return true, nil
	})
}

// logRSS logs each process's resident memory (Linux /proc).
func logRSS(t *testing.T, cp *kubereal.ControlPlane) {
	total := 0

	for _, p := range cp.Processes() {
		b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(p.PID), "status"))
		if err != nil {
			return
		}

		for line := range strings.SplitSeq(string(b), "\n") {
			if f := strings.Fields(line); len(f) >= 2 && f[0] == "VmRSS:" {
				kb, _ := strconv.Atoi(f[1])
				total += kb
				t.Logf("RSS %-24s %6d MiB", p.Name, kb/1024)
			}
		}
	}

	t.Logf("RSS total %d MiB", total/1024)
}
