package kubefake_test

import (
	"context"
	"fmt"
	"net"
	"net/http/httptest"
	"slices"
	"testing"

	"github.com/hetznercloud/hcloud-go/v2/hcloud"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/kubernetes"

	"github.com/ohmytalos/ohmytalos/internal/sandbox/hcloudfake"
	"github.com/ohmytalos/ohmytalos/internal/sandbox/kubefake"
)

// hetzner starts a Hetzner fake with one network and one server per name.
func hetzner(t *testing.T, ctx context.Context, names ...string) (string, map[string]*hcloud.Server) {
	t.Helper()

	hs := httptest.NewServer(hcloudfake.New(hcloudfake.Options{Token: "good"}))
	t.Cleanup(hs.Close)

	c := hcloud.NewClient(hcloud.WithEndpoint(hs.URL), hcloud.WithToken("good"), hcloud.WithPollOpts(hcloud.PollOpts{BackoffFunc: hcloud.ConstantBackoff(0)}))
	_, ipRange, _ := net.ParseCIDR("10.0.0.0/16")
	_, sub, _ := net.ParseCIDR("10.0.1.0/24")

	nw, _, err := c.Network.Create(ctx, hcloud.NetworkCreateOpts{Name: "k8s", IPRange: ipRange, Subnets: []hcloud.NetworkSubnet{{Type: hcloud.NetworkSubnetTypeCloud, NetworkZone: hcloud.NetworkZoneEUCentral, IPRange: sub}}})
	if err != nil {
		t.Fatal(err)
	}

	servers := map[string]*hcloud.Server{}

	for _, name := range names {
		res, _, err := c.Server.Create(ctx, hcloud.ServerCreateOpts{
			Name: name, ServerType: &hcloud.ServerType{Name: "cx23"}, Image: &hcloud.Image{Name: "debian-12"},
			Location: &hcloud.Location{Name: "fsn1"}, Networks: []*hcloud.Network{nw},
		})
		if err != nil {
			t.Fatal(err)
		}

		if err := c.Action.WaitFor(ctx, append([]*hcloud.Action{res.Action}, res.NextActions...)...); err != nil {
			t.Fatal(err)
		}

		servers[name] = res.Server
	}

	return hs.URL, servers
}

func nodeReady(n *corev1.Node) bool {
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.Status == corev1.ConditionTrue
		}
	}

	return false
}

func hasTaint(n *corev1.Node, key string) bool {
	return slices.ContainsFunc(n.Spec.Taints, func(t corev1.Taint) bool { return t.Key == key })
}

func cniDaemonSet() *appsv1.DaemonSet {
	labels := map[string]string{"k8s-app": "cilium"}

	return &appsv1.DaemonSet{
		ObjectMeta: metav1.ObjectMeta{Name: "cilium", Namespace: "kube-system"},
		Spec: appsv1.DaemonSetSpec{
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{
					HostNetwork: true,
					Tolerations: []corev1.Toleration{{Operator: corev1.TolerationOpExists}},
					Containers:  []corev1.Container{{Name: "cilium-agent", Image: "quay.io/cilium/cilium:v1.18.0"}},
					Volumes: []corev1.Volume{{Name: "etc-cni-netd", VolumeSource: corev1.VolumeSource{
						HostPath: &corev1.HostPathVolumeSource{Path: "/etc/cni/net.d"},
					}}},
				},
			},
		},
	}
}

func ccmDeployment() *appsv1.Deployment {
	labels := map[string]string{"app": "hcloud-cloud-controller-manager"}
	ref := func(key string) *corev1.EnvVarSource {
		return &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: "hcloud"}, Key: key}}
	}

	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "hcloud-cloud-controller-manager", Namespace: "kube-system"},
		Spec: appsv1.DeploymentSpec{
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{
					HostNetwork: true,
					Tolerations: []corev1.Toleration{{Key: "node.cloudprovider.kubernetes.io/uninitialized", Value: "true", Effect: corev1.TaintEffectNoSchedule}},
					Containers: []corev1.Container{{
						Name: "hcloud-cloud-controller-manager", Image: "docker.io/hetznercloud/hcloud-cloud-controller-manager:v1.27.0",
						Args: []string{"--cloud-provider=hcloud", "--allocate-node-cidrs=true", "--cluster-cidr=10.42.0.0/16"},
						Env:  []corev1.EnvVar{{Name: "HCLOUD_TOKEN", ValueFrom: ref("token")}, {Name: "HCLOUD_NETWORK", ValueFrom: ref("network")}},
					}},
				},
			},
		},
	}
}

func TestControlLoopCNIAndCloudController(t *testing.T) {
	ctx := testCtx(t)
	endpoint, servers := hetzner(t, ctx, "cp-1", "worker-1")
	e := newEnv(t, kubefake.Options{HCloudEndpoint: endpoint})

	for _, name := range []string{"cp-1", "worker-1"} {
		if err := e.srv.RegisterNode(kubefake.NodeRegistration{Name: name, KubeletVersion: "v1.35.0", ExternalCloudProvider: true, InternalIP: "10.0.1.9"}); err != nil {
			t.Fatal(err)
		}
	}

	nodes := e.cs.CoreV1().Nodes()

	eventually(t, ctx, "nodes NotReady with a pod CIDR and the not-ready taint", func() (bool, string) {
		n, err := nodes.Get(ctx, "cp-1", metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}

		return !nodeReady(n) && n.Spec.PodCIDR == "10.42.0.0/24" && hasTaint(n, "node.kubernetes.io/not-ready") &&
			hasTaint(n, "node.cloudprovider.kubernetes.io/uninitialized"), fmt.Sprintf("%+v %+v", n.Spec, n.Status.Conditions)
	})

	// The CCM cannot run before the CNI: its pod does not tolerate not-ready.
	if _, err := e.cs.CoreV1().Secrets("kube-system").Create(ctx, &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "hcloud"}, StringData: map[string]string{"token": "wrong", "network": "k8s"},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	if _, err := e.cs.AppsV1().Deployments("kube-system").Create(ctx, ccmDeployment(), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	if _, err := e.cs.AppsV1().DaemonSets("kube-system").Create(ctx, cniDaemonSet(), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	eventually(t, ctx, "nodes Ready once the CNI DaemonSet runs", func() (bool, string) {
		ds, err := e.cs.AppsV1().DaemonSets("kube-system").Get(ctx, "cilium", metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}

		n, err := nodes.Get(ctx, "worker-1", metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}

		return nodeReady(n) && !hasTaint(n, "node.kubernetes.io/not-ready") && ds.Status.NumberReady == 2 &&
			ds.Status.DesiredNumberScheduled == 2 && ds.Status.ObservedGeneration == 1, fmt.Sprintf("%+v", ds.Status)
	})

	// A wrong token: the CCM crash-loops, nothing is initialised.
	eventually(t, ctx, "the CCM crash-looping on a wrong token", func() (bool, string) {
		pods, err := e.cs.CoreV1().Pods("kube-system").List(ctx, metav1.ListOptions{LabelSelector: "app=hcloud-cloud-controller-manager"})
		if err != nil || len(pods.Items) != 1 || len(pods.Items[0].Status.ContainerStatuses) != 1 {
			return false, fmt.Sprint(pods, err)
		}

		w := pods.Items[0].Status.ContainerStatuses[0].State.Waiting

		return w != nil && w.Reason == "CrashLoopBackOff", fmt.Sprintf("%+v", pods.Items[0].Status)
	})

	d, _ := e.cs.AppsV1().Deployments("kube-system").Get(ctx, "hcloud-cloud-controller-manager", metav1.GetOptions{})
	if d.Status.AvailableReplicas != 0 || d.Status.Conditions[0].Status != corev1.ConditionFalse {
		t.Fatalf("deployment with a crash-looping pod: %+v", d.Status)
	}

	if n, _ := nodes.Get(ctx, "cp-1", metav1.GetOptions{}); n.Spec.ProviderID != "" || !hasTaint(n, "node.cloudprovider.kubernetes.io/uninitialized") {
		t.Fatalf("a node was initialised with a wrong token: %+v", n.Spec)
	}

	// The right token: provider IDs from the Hetzner API, taint lifted.
	sec, _ := e.cs.CoreV1().Secrets("kube-system").Get(ctx, "hcloud", metav1.GetOptions{})
	sec.Data["token"] = []byte("good")

	if _, err := e.cs.CoreV1().Secrets("kube-system").Update(ctx, sec, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}

	eventually(t, ctx, "nodes initialised by the CCM", func() (bool, string) {
		for name, srv := range servers {
			n, err := nodes.Get(ctx, name, metav1.GetOptions{})
			if err != nil {
				return false, err.Error()
			}

			if n.Spec.ProviderID != fmt.Sprintf("hcloud://%d", srv.ID) || hasTaint(n, "node.cloudprovider.kubernetes.io/uninitialized") ||
				n.Labels["node.kubernetes.io/instance-type"] != "cx23" {
				return false, fmt.Sprintf("%s: %+v %v", name, n.Spec, n.Labels)
			}
		}

		d, err := e.cs.AppsV1().Deployments("kube-system").Get(ctx, "hcloud-cloud-controller-manager", metav1.GetOptions{})

		return err == nil && d.Status.AvailableReplicas == 1, fmt.Sprintf("%+v", d.Status)
	})

	// The route controller: one route per node's pod CIDR in the network.
	c := hcloud.NewClient(hcloud.WithEndpoint(endpoint), hcloud.WithToken("good"))

	eventually(t, ctx, "pod routes in the Hetzner network", func() (bool, string) {
		nw, _, err := c.Network.GetByName(ctx, "k8s")
		if err != nil || nw == nil {
			return false, fmt.Sprint(err)
		}

		return len(nw.Routes) == 2, fmt.Sprintf("%+v", nw.Routes)
	})

	// Settled: further passes of the loop write nothing.
	e.srv.Sync(ctx)

	before, err := e.cs.CoreV1().ConfigMaps("default").List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}

	for range 3 {
		e.srv.Sync(ctx)
	}

	after, err := e.cs.CoreV1().ConfigMaps("default").List(ctx, metav1.ListOptions{})
	if err != nil || after.ResourceVersion != before.ResourceVersion {
		t.Fatalf("the settled loop keeps writing: rv %s -> %s (%v)", before.ResourceVersion, after.ResourceVersion, err)
	}
}

func TestEvictionRespectsPDB(t *testing.T) {
	ctx := testCtx(t)
	e := newEnv(t, kubefake.Options{})

	for _, name := range []string{"a", "b"} {
		if err := e.srv.RegisterNode(kubefake.NodeRegistration{Name: name, KubeletVersion: "v1.35.0"}); err != nil {
			t.Fatal(err)
		}
	}

	if _, err := e.cs.AppsV1().DaemonSets("kube-system").Create(ctx, cniDaemonSet(), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	labels := map[string]string{"app": "web"}
	two := int32(2)

	if _, err := e.cs.AppsV1().Deployments("default").Create(ctx, &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "web"},
		Spec: appsv1.DeploymentSpec{
			Replicas: &two, Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels}, Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "web", Image: "nginx"}}}},
		},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	minAvail := intstr.FromInt32(2)
	if _, err := e.cs.PolicyV1().PodDisruptionBudgets("default").Create(ctx, &policyv1.PodDisruptionBudget{
		ObjectMeta: metav1.ObjectMeta{Name: "web"},
		Spec:       policyv1.PodDisruptionBudgetSpec{MinAvailable: &minAvail, Selector: &metav1.LabelSelector{MatchLabels: labels}},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	eventually(t, ctx, "web available on both nodes", func() (bool, string) {
		d, err := e.cs.AppsV1().Deployments("default").Get(ctx, "web", metav1.GetOptions{})

		return err == nil && d.Status.AvailableReplicas == 2 && d.Status.UpdatedReplicas == 2, fmt.Sprintf("%+v", d.Status)
	})

	// Drain node a: cordon, then evict its pods.
	if _, err := e.cs.CoreV1().Nodes().Patch(ctx, "a", "application/strategic-merge-patch+json", []byte(`{"spec":{"unschedulable":true}}`), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}

	pods, err := e.cs.CoreV1().Pods("default").List(ctx, metav1.ListOptions{FieldSelector: "spec.nodeName=a"})
	if err != nil || len(pods.Items) != 1 {
		t.Fatalf("pods on a: %v %v", pods, err)
	}

	// The default typed client sends the Eviction as protobuf.
	plain := kubernetes.NewForConfigOrDie(e.cfg)
	ev := &policyv1.Eviction{ObjectMeta: metav1.ObjectMeta{Name: pods.Items[0].Name, Namespace: "default"}}

	err = plain.PolicyV1().Evictions("default").Evict(ctx, ev)
	if !apierrors.IsTooManyRequests(err) || err.Error() != "Cannot evict pod as it would violate the pod's disruption budget." {
		t.Fatalf("eviction against minAvailable 2: %v, want 429", err)
	}

	pdb, _ := e.cs.PolicyV1().PodDisruptionBudgets("default").Get(ctx, "web", metav1.GetOptions{})
	pdb.Spec.MinAvailable = ptrTo(intstr.FromInt32(1))

	if _, err := e.cs.PolicyV1().PodDisruptionBudgets("default").Update(ctx, pdb, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}

	if err := plain.PolicyV1().Evictions("default").Evict(ctx, ev); err != nil {
		t.Fatalf("eviction against minAvailable 1: %v", err)
	}

	eventually(t, ctx, "the evicted pod replaced on the uncordoned node", func() (bool, string) {
		pods, err := e.cs.CoreV1().Pods("default").List(ctx, metav1.ListOptions{LabelSelector: "app=web"})
		if err != nil || len(pods.Items) != 2 {
			return false, fmt.Sprint(err)
		}

		for _, p := range pods.Items {
			if p.Spec.NodeName != "b" {
				return false, p.Name + " on " + p.Spec.NodeName
			}
		}

		return true, ""
	})

	// Deleting a node removes its pods (pod garbage collection).
	if err := e.cs.CoreV1().Nodes().Delete(ctx, "b", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}

	eventually(t, ctx, "pods of a deleted node removed", func() (bool, string) {
		pods, err := e.cs.CoreV1().Pods("").List(ctx, metav1.ListOptions{FieldSelector: "spec.nodeName=b"})

		return err == nil && len(pods.Items) == 0, fmt.Sprint(err)
	})
}

func ptrTo[T any](v T) *T { return &v }
