package talosfake_test

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net"
	"net/netip"
	"slices"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/ohmytalos/ohmytalos/internal/sandbox/talosfake"
)

// kubeClient builds client-go from the admin kubeconfig, pointed at one
// control plane's API server (the kubeconfig names the cluster endpoint).
func kubeClient(t *testing.T, kubeconfig []byte, endpoint string) (*kubernetes.Clientset, *rest.Config) {
	t.Helper()

	cfg, err := clientcmd.RESTConfigFromKubeConfig(kubeconfig)
	if err != nil {
		t.Fatal(err)
	}

	cfg.Host = "https://" + endpoint
	cfg.ContentType = "application/json"
	cfg.Timeout = 10 * time.Second

	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}

	return cs, cfg
}

func waitFor(t *testing.T, ctx context.Context, what string, cond func() (bool, string)) {
	t.Helper()

	for {
		ok, detail := cond()
		if ok {
			return
		}

		select {
		case <-ctx.Done():
			t.Fatalf("%s: never happened; last: %s", what, detail)
		case <-time.After(20 * time.Millisecond):
		}
	}
}

func nodeCondition(n corev1.Node) corev1.ConditionStatus {
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.Status
		}
	}

	return ""
}

func TestKubernetesAPIAfterBootstrap(t *testing.T) {
	t.Parallel()

	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()

	fx := must(t, vipFixture)
	e := newEnv(t)
	cp := e.start(91, fx.ControlPlane, nil)
	cp2 := e.start(92, fx.ControlPlane, nil)
	e.start(93, fx.Worker, nil)

	if cp.KubernetesEndpoint() != "" {
		t.Fatal("Kubernetes API served before bootstrap")
	}

	c := dial(t, fx.Talosconfig, cp)
	if _, err := c.BootstrapOnce(ctx); err != nil {
		t.Fatal(err)
	}

	if err := cp.KubeErr(); err != nil {
		t.Fatal(err)
	}

	kubeconfig, err := c.Kubeconfig(ctx)
	if err != nil {
		t.Fatal(err)
	}

	// Talos writes the config's cluster endpoint, not the dialled address.
	if c, err := clientcmd.RESTConfigFromKubeConfig(kubeconfig); err != nil || c.Host != "https://10.0.1.100:6443" {
		t.Fatalf("kubeconfig server = %v (%v), want https://10.0.1.100:6443", c, err)
	}

	cs, cfg := kubeClient(t, kubeconfig, cp.KubernetesEndpoint())
	cs2, _ := kubeClient(t, kubeconfig, cp2.KubernetesEndpoint())

	if v, err := cs.Discovery().ServerVersion(); err != nil || v.GitVersion != "v1.35.0" {
		t.Fatalf("version: %+v %v", v, err)
	}

	// Every node registers NotReady (no CNI yet), with Talos' labels and
	// taints, no provider ID (no cloud controller yet) and a pod CIDR.
	waitFor(t, ctx, "three NotReady nodes with pod CIDRs", func() (bool, string) {
		nodes, err := cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
		if err != nil || len(nodes.Items) != 3 {
			return false, fmt.Sprint(nodes, err)
		}

		for _, n := range nodes.Items {
			if nodeCondition(n) != corev1.ConditionFalse || n.Spec.PodCIDR == "" {
				return false, fmt.Sprintf("%s: %v %q", n.Name, nodeCondition(n), n.Spec.PodCIDR)
			}
		}

		return true, ""
	})

	nodes, err := cs2.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}

	var names []string

	for _, n := range nodes.Items {
		names = append(names, n.Name)
		_, isCP := n.Labels["node-role.kubernetes.io/control-plane"]
		_, excluded := n.Labels["node.kubernetes.io/exclude-from-external-load-balancers"]
		tainted := slices.ContainsFunc(n.Spec.Taints, func(t corev1.Taint) bool {
			return t.Key == "node-role.kubernetes.io/control-plane" && t.Effect == corev1.TaintEffectNoSchedule
		})

		if wantCP := n.Name != "node-93"; isCP != wantCP || excluded != wantCP || tainted != wantCP {
			t.Errorf("%s: control-plane label %v, LB exclusion %v, taint %v; want %v", n.Name, isCP, excluded, tainted, wantCP)
		}

		if n.Spec.ProviderID != "" || n.Status.NodeInfo.KubeletVersion != "v1.35.0" || !strings.HasPrefix(n.Status.NodeInfo.OSImage, "Talos (v") {
			t.Errorf("%s: providerID %q, kubelet %q, os %q", n.Name, n.Spec.ProviderID, n.Status.NodeInfo.KubeletVersion, n.Status.NodeInfo.OSImage)
		}
	}

	if want := []string{"node-91", "node-92", "node-93"}; !slices.Equal(names, want) {
		t.Fatalf("nodes = %v, want %v", names, want)
	}

	// One store behind both API servers; a CNI DaemonSet readies the nodes.
	ds := &appsv1.DaemonSet{
		ObjectMeta: metav1.ObjectMeta{Name: "cni", Namespace: "kube-system"},
		Spec: appsv1.DaemonSetSpec{
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "cni"}},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "cni"}},
				Spec: corev1.PodSpec{
					HostNetwork: true, Tolerations: []corev1.Toleration{{Operator: corev1.TolerationOpExists}},
					Containers: []corev1.Container{{Name: "agent", Image: "quay.io/cilium/cilium:v1.18.0"}},
					Volumes:    []corev1.Volume{{Name: "cni", VolumeSource: corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: "/etc/cni/net.d"}}}},
				},
			},
		},
	}

	if _, err := cs.AppsV1().DaemonSets("kube-system").Create(ctx, ds, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	waitFor(t, ctx, "nodes Ready through the other API server", func() (bool, string) {
		nodes, err := cs2.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, err.Error()
		}

		for _, n := range nodes.Items {
			if nodeCondition(n) != corev1.ConditionTrue {
				return false, n.Name
			}
		}

		return true, ""
	})

	// Anonymous requests are system:anonymous, forbidden outside /version and health.
	anon := rest.AnonymousClientConfig(cfg)
	if _, err := kubernetes.NewForConfigOrDie(anon).CoreV1().Nodes().List(ctx, metav1.ListOptions{}); !apierrors.IsForbidden(err) {
		t.Fatalf("anonymous node list: %v, want Forbidden", err)
	}

	// A stopped control plane's kubelet stops posting; the other API server answers.
	cp.Stop()

	if _, err := net.DialTimeout("tcp", cfg.Host[len("https://"):], time.Second); err == nil {
		t.Fatal("Kubernetes API still served after the node stopped")
	}

	waitFor(t, ctx, "node-91 Unknown after its kubelet stopped", func() (bool, string) {
		n, err := cs2.CoreV1().Nodes().Get(ctx, "node-91", metav1.GetOptions{})

		return err == nil && nodeCondition(*n) == corev1.ConditionUnknown, fmt.Sprint(err)
	})
}

func TestKubernetesServingCertSANs(t *testing.T) {
	t.Parallel()

	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()

	fx := must(t, vipFixture)
	e := newEnv(t)
	cp := e.start(94, fx.ControlPlane, nil)

	c := dial(t, fx.Talosconfig, cp)
	if _, err := c.BootstrapOnce(ctx); err != nil {
		t.Fatal(err)
	}

	kubeconfig, err := c.Kubeconfig(ctx)
	if err != nil {
		t.Fatal(err)
	}

	cfg, err := clientcmd.RESTConfigFromKubeConfig(kubeconfig)
	if err != nil {
		t.Fatal(err)
	}

	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(cfg.CAData)

	host, _, _ := net.SplitHostPort(cp.KubernetesEndpoint())

	for name, ok := range map[string]bool{
		host: true, "10.0.1.94": true, "10.0.1.100": true, "kubernetes.default.svc": true,
		"localhost": true, "node-94": true, "10.96.0.1": true, "api.example.com": false, "10.0.1.200": false,
	} {
		conn, err := tls.Dial("tcp", cp.KubernetesEndpoint(), &tls.Config{MinVersion: tls.VersionTLS12, RootCAs: pool, ServerName: name})
		if err == nil {
			_ = conn.Close()
		}

		if (err == nil) != ok {
			t.Errorf("TLS to %s: err %v, want success %v", name, err, ok)
		}
	}
}

func TestKubernetesAPIBehindFirewall(t *testing.T) {
	t.Parallel()

	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()

	fx := must(t, vipFixture)
	e := newEnv(t)
	e.tf = talosfake.NewCluster(talosfake.ClusterOptions{Admit: func(_ int64, _ netip.Addr, port int) bool { return port != talosfake.KubernetesPort }})
	cp := e.start(95, fx.ControlPlane, nil)

	c := dial(t, fx.Talosconfig, cp)
	if _, err := c.BootstrapOnce(ctx); err != nil {
		t.Fatal(err)
	}

	kubeconfig, err := c.Kubeconfig(ctx)
	if err != nil {
		t.Fatal(err)
	}

	cs, _ := kubeClient(t, kubeconfig, cp.KubernetesEndpoint())
	if _, err := cs.Discovery().ServerVersion(); err == nil {
		t.Fatal("the Kubernetes API answered through a firewall that refuses port 6443")
	}
}
