//go:build unix

package releases

import (
	"context"
	"testing"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/ohmytalos/ohmytalos/internal/sandbox/kubereal"
	"github.com/ohmytalos/ohmytalos/internal/sandbox/kubereal/kubetest"
)

// cluster is a real control plane (kubetest: configured as Talos
// configures it, PodSecurity admission included) with one simulated
// kubelet, and an admin kubeconfig for it.
type cluster struct {
	cp         *kubereal.ControlPlane
	kubeconfig []byte
	admin      *kubernetes.Clientset
}

func startCluster(t *testing.T, ctx context.Context) *cluster {
	t.Helper()

	cp := kubetest.Start(t, ctx, "releases")

	admin, err := cp.Client("admin", "system:masters")
	if err != nil {
		t.Fatal(err)
	}

	k, err := cp.StartKubelet(ctx, kubereal.KubeletConfig{Name: "n1", Version: "v1.36.3", InternalIP: "10.0.1.1"})
	if err != nil {
		t.Fatal(err)
	}

	t.Cleanup(k.Stop)

	return &cluster{cp: cp, kubeconfig: kubetest.AdminKubeconfig(t, cp), admin: admin}
}

// helmCLI runs the stock helm CLI against the cluster.
func (c *cluster) helmCLI(t *testing.T, bin string, args ...string) []byte {
	t.Helper()

	return kubetest.Helm(t, bin, c.kubeconfig, args...)
}

func clientcmdRESTConfig(kubeconfig []byte) (*rest.Config, error) {
	return clientcmd.RESTConfigFromKubeConfig(kubeconfig)
}
