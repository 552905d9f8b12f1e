//go:build unix

package talosfake_test

import (
	"context"
	"log/slog"
	"slices"
	"strings"
	"testing"

	"github.com/siderolabs/talos/pkg/machinery/api/machine"
	"github.com/siderolabs/talos/pkg/machinery/config/configloader"
	"github.com/siderolabs/talos/pkg/machinery/config/types/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/ohmytalos/ohmytalos/internal/sandbox/talosfake"
	"github.com/ohmytalos/ohmytalos/internal/sandbox/talosfake/fixture"
)

// On the real control plane, Talos' side acts on the real API server:
// its ServiceAccount CRD is served, a live config change relabels and
// retaints the Node (owned annotations), a new kubelet image restarts the
// kubelet at its version, and a stopped node's kubelet stops posting.
func TestRealKubernetesTalosSide(t *testing.T) {
	ctx, e := realEnv(t, talosfake.ClusterOptions{
		Logger: slog.New(slog.NewTextHandler(t.Output(), &slog.HandlerOptions{Level: slog.LevelWarn})),
	})

	fx, err := fixture.New("realtalos", fixture.Options{NodeLabels: map[string]string{"ohmytalos.dev/pool": "a"}})
	if err != nil {
		t.Fatal(err)
	}

	cp := e.start(81, withTalosAPIAccess(t, fx.ControlPlane), nil)
	worker := e.start(82, fx.Worker, nil)

	c := dial(t, fx.Talosconfig, cp)
	if _, err := c.BootstrapOnce(ctx); err != nil {
		t.Fatal(err)
	}

	kubeconfig, err := c.Kubeconfig(ctx)
	if err != nil {
		t.Fatal(err)
	}

	waitFor(t, ctx, "the real kube-apiserver on the control plane", func() (bool, string) { return cp.KubernetesEndpoint() != "", "" })

	cs, _ := kubeClient(t, kubeconfig, cp.KubernetesEndpoint())

	waitFor(t, ctx, "talos.dev/v1alpha1 ServiceAccount served", func() (bool, string) {
		_, err := cs.Discovery().ServerResourcesForGroupVersion("talos.dev/v1alpha1")

		return err == nil, errString(err)
	})

	restCfg, err := clientcmd.RESTConfigFromKubeConfig(kubeconfig)
	if err != nil {
		t.Fatal(err)
	}

	restCfg.Host = "https://" + cp.KubernetesEndpoint()
	dc := dynamic.NewForConfigOrDie(restCfg)

	if _, err := dc.Resource(schema.GroupVersionResource{Group: "talos.dev", Version: "v1alpha1", Resource: "serviceaccounts"}).
		Namespace("kube-system").List(ctx, metav1.ListOptions{}); err != nil {
		t.Fatalf("list talos.dev ServiceAccounts: %v", err)
	}

	waitNode(t, ctx, cs, "node-82", "the worker registered with Talos' label, owned", func(n *corev1.Node) (bool, string) {
		return n.Labels["ohmytalos.dev/pool"] == "a" && strings.Contains(n.Annotations["talos.dev/owned-labels"], "ohmytalos.dev/pool"),
			n.Annotations["talos.dev/owned-labels"]
	})

	// A live change: another label value, a taint, and the kubelet at v1.35.1.
	changed := strings.Replace(string(fx.Worker), "ohmytalos.dev/pool: a", "ohmytalos.dev/pool: b\n        ohmytalos.dev/new: \"yes\"", 1)
	changed = strings.Replace(changed, "ghcr.io/siderolabs/kubelet:v1.35.0", "ghcr.io/siderolabs/kubelet:v1.35.1", 1)
	changed = strings.Replace(changed, "machine:\n", "machine:\n    nodeTaints:\n        dedicated: db:NoSchedule\n", 1)

	if changed == string(fx.Worker) || !strings.Contains(changed, "kubelet:v1.35.1") {
		t.Fatalf("the worker config did not change as the test expects:\n%s", fx.Worker)
	}

	applyNoReboot(t, ctx, fx.Talosconfig, worker, []byte(changed))

	waitNode(t, ctx, cs, "node-82", "the worker relabelled, tainted and at kubelet v1.35.1", func(n *corev1.Node) (bool, string) {
		tainted := slices.ContainsFunc(n.Spec.Taints, func(t corev1.Taint) bool {
			return t.Key == "dedicated" && t.Value == "db" && t.Effect == corev1.TaintEffectNoSchedule
		})

		return n.Labels["ohmytalos.dev/pool"] == "b" && n.Labels["ohmytalos.dev/new"] == "yes" && tainted &&
				n.Status.NodeInfo.KubeletVersion == "v1.35.1",
			n.Status.NodeInfo.KubeletVersion + " " + n.Annotations["talos.dev/owned-labels"] + " " + n.Annotations["talos.dev/owned-taints"]
	})

	// Back without the taint and the new label: Talos removes what it owned.
	applyNoReboot(t, ctx, fx.Talosconfig, worker, fx.Worker)

	waitNode(t, ctx, cs, "node-82", "Talos' label and taint removed again", func(n *corev1.Node) (bool, string) {
		_, labelled := n.Labels["ohmytalos.dev/new"]
		tainted := slices.ContainsFunc(n.Spec.Taints, func(t corev1.Taint) bool { return t.Key == "dedicated" })

		return !labelled && !tainted && n.Labels["ohmytalos.dev/pool"] == "a", n.Annotations["talos.dev/owned-taints"]
	})
}

// waitNode polls the Node called name until cond holds, failing with what
// and cond's last detail when ctx ends.
func waitNode(t *testing.T, ctx context.Context, cs kubernetes.Interface, name, what string, cond func(*corev1.Node) (bool, string)) {
	t.Helper()

	waitFor(t, ctx, what, func() (bool, string) {
		n, err := cs.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}

		return cond(n)
	})
}

// applyNoReboot applies cfg to n live, as talosctl apply-config --mode no-reboot.
func applyNoReboot(t *testing.T, ctx context.Context, talosconfig []byte, n *talosfake.Node, cfg []byte) {
	t.Helper()

	if _, err := rawDial(t, talosconfig, n).ApplyConfiguration(ctx, &machine.ApplyConfigurationRequest{
		Data: cfg, Mode: machine.ApplyConfigurationRequest_NO_REBOOT,
	}); err != nil {
		t.Fatal(err)
	}
}

// withTalosAPIAccess turns machine.features.kubernetesTalosAPIAccess on.
func withTalosAPIAccess(t *testing.T, cfg []byte) []byte {
	t.Helper()

	p, err := configloader.NewFromBytes(cfg)
	if err != nil {
		t.Fatal(err)
	}

	on := true

	patched, err := p.PatchV1Alpha1(func(raw *v1alpha1.Config) error {
		if raw.MachineConfig.MachineFeatures == nil {
			raw.MachineConfig.MachineFeatures = &v1alpha1.FeaturesConfig{}
		}

		raw.MachineConfig.MachineFeatures.KubernetesTalosAPIAccessConfig = &v1alpha1.KubernetesTalosAPIAccessConfig{
			AccessEnabled: &on, AccessAllowedRoles: []string{"os:etcd:backup"}, AccessAllowedKubernetesNamespaces: []string{"kube-system"},
		}

		return nil
	})
	if err != nil {
		t.Fatal(err)
	}

	return encoded(t, patched)
}
