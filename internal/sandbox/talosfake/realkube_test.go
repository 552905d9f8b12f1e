//go:build unix

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
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/ohmytalos/ohmytalos/internal/sandbox/kubereal/kubetest"
	"github.com/ohmytalos/ohmytalos/internal/sandbox/talosfake"
	"github.com/ohmytalos/ohmytalos/internal/sandbox/talosfake/fixture"
)

// With RealKubernetes, the control planes serve the real kube-apiserver
// on PublicIP:6443 once etcd is bootstrapped, behind the servers'
// firewalls: the Talos API's admin kubeconfig (naming the cluster
// endpoint) authenticates, anonymous requests are forbidden, the serving
// certificate carries Talos' SANs, and the simulated kubelets register
// nodes with Talos' labels and taints, Ready once a CNI runs.
// realEnv returns a three-minute context and a cluster whose control planes
// run the real Kubernetes control plane, with o's other options. A fresh
// machine builds the binaries first (about ten minutes on two busy cores),
// or waits for the kubereal tests' build.
func realEnv(t *testing.T, o talosfake.ClusterOptions) (context.Context, *env) {
	t.Helper()

	bins := kubetest.Binaries(t)

	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
	t.Cleanup(cancel)

	o.RealKubernetes, o.RealKubernetesDir = talosfake.Built(bins), t.TempDir()
	tf := talosfake.NewCluster(o)
	t.Cleanup(tf.Close)

	return ctx, &env{t: t, tf: tf, pfx: fixture.LoopbackPrefix()}
}

func TestRealKubernetesAfterBootstrap(t *testing.T) {
	// The firewall refuses port 6443 while firewalled is set.
	var firewalled atomic.Bool
	admit := func(_ int64, _ netip.Addr, port int) bool {
		return port != talosfake.KubernetesPort || !firewalled.Load()
	}
	ctx, e := realEnv(t, talosfake.ClusterOptions{Admit: admit})
	tf := e.tf
	fx := must(t, vipFixture)

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

	waitFor(t, ctx, "the real kube-apiserver answers on both control planes", func() (bool, string) {
		if cp.KubernetesEndpoint() == "" || cp2.KubernetesEndpoint() == "" {
			return false, "not served yet"
		}

		for _, n := range []*talosfake.Node{cp, cp2} {
			cs, _ := kubeClient(t, kubeconfig, n.KubernetesEndpoint())

			v, err := cs.Discovery().ServerVersion()
			if err != nil {
				return false, err.Error()
			}

			if v.GitVersion != "v1.36.3" {
				return false, "version " + v.GitVersion
			}
		}

		return true, ""
	})

	cs, cfg := kubeClient(t, kubeconfig, cp2.KubernetesEndpoint())

	checkServingCertSANs(t, kubeconfig, cp.KubernetesEndpoint(), "10.0.1.91")

	// Talos runs kube-apiserver with --anonymous-auth=false (siderolabs/talos
	// controllers/k8s/control_plane_static_pod.go): a request without a
	// client certificate is 401 Unauthorized, not system:anonymous.
	anon := rest.AnonymousClientConfig(cfg)
	if _, err := kubernetes.NewForConfigOrDie(anon).CoreV1().Nodes().List(ctx, metav1.ListOptions{}); !apierrors.IsUnauthorized(err) {
		t.Fatalf("anonymous node list: %v, want Unauthorized", err)
	}

	checkFirewall(t, kubeconfig, cp.KubernetesEndpoint(), &firewalled)

	// Every node registers NotReady (no CNI yet), with a pod CIDR from the
	// node IPAM controller.
	waitFor(t, ctx, "three NotReady nodes with pod CIDRs", func() (bool, string) {
		nodes, err := cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
		if err != nil || len(nodes.Items) != 3 {
			return false, "nodes: " + errString(err)
		}

		for _, n := range nodes.Items {
			if nodeCondition(n) != corev1.ConditionFalse || n.Spec.PodCIDR == "" {
				return false, fmt.Sprintf("%s: Ready %q, pod CIDR %q", n.Name, nodeCondition(n), n.Spec.PodCIDR)
			}
		}

		return true, ""
	})

	checkTalosNodeLabels(t, ctx, cs)

	labels := map[string]string{"k8s-app": "cilium"}
	ds := &appsv1.DaemonSet{ObjectMeta: metav1.ObjectMeta{Name: "cilium", Namespace: "kube-system"}, Spec: appsv1.DaemonSetSpec{
		Selector: &metav1.LabelSelector{MatchLabels: labels},
		Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels}, Spec: corev1.PodSpec{
			HostNetwork: true, Tolerations: []corev1.Toleration{{Operator: corev1.TolerationOpExists}},
			Containers: []corev1.Container{{Name: "agent", Image: "quay.io/cilium/cilium:v1.18.0"}},
			Volumes:    []corev1.Volume{{Name: "cni", VolumeSource: corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: "/etc/cni/net.d"}}}},
		}},
	}}

	if _, err := cs.AppsV1().DaemonSets("kube-system").Create(ctx, ds, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	waitFor(t, ctx, "every node Ready once the CNI runs", func() (bool, string) {
		nodes, err := cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, err.Error()
		}

		for _, n := range nodes.Items {
			if nodeCondition(n) != corev1.ConditionTrue {
				return false, n.Name + " not Ready"
			}
		}

		return len(nodes.Items) == 3, ""
	})

	// What kubectl get nodes -o wide prints comes from the server's table.
	table := kubetest.NodeTable(t, ctx, cs)
	col := map[string]int{}
	for i, c := range table.ColumnDefinitions {
		col[c.Name] = i
	}

	for _, r := range table.Rows {
		name, _ := r.Cells[col["Name"]].(string)
		status, _ := r.Cells[col["Status"]].(string)
		version, _ := r.Cells[col["Version"]].(string)
		roles, _ := r.Cells[col["Roles"]].(string)

		if status != "Ready" || version != "v1.35.0" {
			t.Errorf("node %s: STATUS %q VERSION %q, want Ready and the kubelet's v1.35.0", name, status, version)
		}

		if wantCP := !strings.Contains(name, "93"); wantCP != (roles == "control-plane") {
			t.Errorf("node %s: ROLES %q", name, roles)
		}
	}

	// A stopped control plane's PublicIP:6443 closes; the other answers.
	stopped := cp.KubernetesEndpoint()
	cp.Stop()

	if conn, err := net.DialTimeout("tcp", stopped, time.Second); err == nil {
		_ = conn.Close()

		t.Fatalf("the stopped control plane still accepts on %s", stopped)
	}

	if _, err := cs.Discovery().ServerVersion(); err != nil {
		t.Fatalf("the other control plane after the first stopped: %v", err)
	}

	// Once every server of the cluster is deleted its etcd is gone, and so
	// is its real control plane: no process is left.
	procs := tf.RealKubernetesProcesses()
	if len(procs) != 4 {
		t.Fatalf("real control plane processes = %v, want etcd, kube-apiserver, kube-controller-manager, kube-scheduler", procs)
	}

	for _, id := range []int64{91, 92, 93} {
		tf.ForgetServer(id)
	}

	waitFor(t, ctx, "the deleted cluster's control plane processes end", func() (bool, string) {
		for _, p := range procs {
			if syscall.Kill(p.PID, 0) == nil {
				return false, p.Name + " still runs"
			}
		}

		return true, ""
	})
}

func errString(err error) string {
	if err == nil {
		return ""
	}

	return err.Error()
}

// checkServingCertSANs dials the API server with the kubeconfig's CA for
// each name: Talos' SANs (siderolabs/talos controllers/secrets/
// kubernetes_cert_sans.go: the endpoint host, the in-cluster names,
// localhost, the service IP, the node's name and addresses) verify, other
// names do not.
func checkServingCertSANs(t *testing.T, kubeconfig []byte, endpoint, privateIP string) {
	t.Helper()

	pool := kubeconfigCAs(t, kubeconfig)

	host, _, _ := net.SplitHostPort(endpoint)

	for name, ok := range map[string]bool{
		host: true, privateIP: true, "10.0.1.100": true, "kubernetes.default.svc": true,
		"localhost": true, "node-91": true, "10.96.0.1": true, "api.example.com": false, "10.0.1.200": false,
	} {
		conn, err := tls.Dial("tcp", endpoint, &tls.Config{MinVersion: tls.VersionTLS12, RootCAs: pool, ServerName: name})
		if err == nil {
			_ = conn.Close()
		}

		if (err == nil) != ok {
			t.Errorf("TLS to %s as %s: err %v, want success %v", endpoint, name, err, ok)
		}
	}
}

// checkFirewall: while the servers' firewall refuses 6443, a connection
// to the API server is dropped before any TLS; once it admits, it works.
func checkFirewall(t *testing.T, kubeconfig []byte, endpoint string, firewalled *atomic.Bool) {
	t.Helper()

	pool := kubeconfigCAs(t, kubeconfig)
	tc := &tls.Config{MinVersion: tls.VersionTLS12, RootCAs: pool, ServerName: "localhost"}
	dialer := &net.Dialer{Timeout: 5 * time.Second}

	firewalled.Store(true)

	if conn, err := tls.DialWithDialer(dialer, "tcp", endpoint, tc); err == nil {
		_ = conn.Close()

		t.Error("the Kubernetes API answered through a firewall that refuses port 6443")
	}

	firewalled.Store(false)

	conn, err := tls.DialWithDialer(dialer, "tcp", endpoint, tc)
	if err != nil {
		t.Fatalf("the Kubernetes API once the firewall admits 6443 again: %v", err)
	}

	_ = conn.Close()
}

// checkTalosNodeLabels: control planes carry the role label, the load
// balancer exclusion and the NoSchedule taint, the worker none of them;
// each kubelet reports the machine config's kubelet version and Talos as
// its OS, and no provider ID (no cloud controller runs).
func checkTalosNodeLabels(t *testing.T, ctx context.Context, cs *kubernetes.Clientset) {
	t.Helper()

	nodes, err := cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
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
}

// kubeconfigCAs is the pool of the kubeconfig's cluster CA.
func kubeconfigCAs(t *testing.T, kubeconfig []byte) *x509.CertPool {
	t.Helper()

	cfg, err := clientcmd.RESTConfigFromKubeConfig(kubeconfig)
	if err != nil {
		t.Fatal(err)
	}

	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(cfg.CAData) {
		t.Fatal("the kubeconfig's cluster has no CA certificate")
	}

	return pool
}
