//go:build unix

package talosfake_test

import (
	"context"
	"encoding/json"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/ohmytalos/ohmytalos/internal/sandbox/kubereal/kubebin"
	"github.com/ohmytalos/ohmytalos/internal/sandbox/talosfake"
	"github.com/ohmytalos/ohmytalos/internal/sandbox/talosfake/fixture"
)

// With RealKubernetes, the control planes serve the real kube-apiserver
// on PublicIP:6443: the Talos API's admin kubeconfig authenticates, the
// serving certificate verifies on every control plane's address, and the
// simulated kubelets register Ready nodes once a CNI runs.
func TestRealKubernetesAfterBootstrap(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("the real Kubernetes control plane is built from source: no go command on PATH")
	}

	// A fresh machine builds the binaries first (about ten minutes on two
	// busy cores), or waits for the kubereal tests' build.
	buildCtx, cancelBuild := context.WithTimeout(t.Context(), 25*time.Minute)
	defer cancelBuild()

	bins, err := kubebin.Ensure(buildCtx, kubebin.Options{})
	if err != nil {
		t.Fatal(err)
	}

	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
	defer cancel()

	fx := must(t, vipFixture)
	tf := talosfake.NewCluster(talosfake.ClusterOptions{RealKubernetes: &bins, RealKubernetesDir: t.TempDir()})
	t.Cleanup(tf.Close)

	e := &env{t: t, tf: tf, pfx: fixture.LoopbackPrefix()}
	cp := e.start(91, fx.ControlPlane, nil)
	cp2 := e.start(92, fx.ControlPlane, nil)
	e.start(93, fx.Worker, nil)

	c := dial(t, fx.Talosconfig, cp)
	if _, err := c.BootstrapOnce(ctx); err != nil {
		t.Fatal(err)
	}

	kubeconfig, err := c.Kubeconfig(ctx)
	if err != nil {
		t.Fatal(err)
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

	cs, _ := kubeClient(t, kubeconfig, cp2.KubernetesEndpoint())

	waitFor(t, ctx, "three NotReady nodes", func() (bool, string) {
		nodes, err := cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
		if err != nil || len(nodes.Items) != 3 {
			return false, "nodes: " + errString(err)
		}

		for _, n := range nodes.Items {
			if nodeCondition(n) != corev1.ConditionFalse {
				return false, n.Name + " Ready " + string(nodeCondition(n))
			}
		}

		return true, ""
	})

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
	raw, err := cs.CoreV1().RESTClient().Get().Resource("nodes").
		SetHeader("Accept", "application/json;as=Table;v=v1;g=meta.k8s.io").Do(ctx).Raw()
	if err != nil {
		t.Fatal(err)
	}

	var table metav1.Table
	if err := json.Unmarshal(raw, &table); err != nil {
		t.Fatal(err)
	}

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
