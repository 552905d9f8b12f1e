//go:build unix

package releases

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/ohmytalos/ohmytalos/internal/sandbox/kubereal"
	"github.com/ohmytalos/ohmytalos/internal/sandbox/kubereal/kubebin"
	"github.com/ohmytalos/ohmytalos/internal/talos"
)

// The control plane's binaries are built once (and reused from the
// user's cache, ~/.cache/ohmytalos/kube, by later runs).
var (
	binsOnce sync.Once
	bins     kubebin.Binaries
	binsErr  error
)

func binaries(t *testing.T) kubebin.Binaries {
	t.Helper()

	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("the real Kubernetes control plane is built from source: no go command on PATH")
	}

	binsOnce.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 25*time.Minute)
		defer cancel()

		bins, binsErr = kubebin.Ensure(ctx, kubebin.Options{})
	})

	if binsErr != nil {
		t.Fatal(binsErr)
	}

	return bins
}

// cluster is a real control plane with one simulated kubelet, and an
// admin kubeconfig for it.
type cluster struct {
	cp         *kubereal.ControlPlane
	kubeconfig []byte
	admin      *kubernetes.Clientset
}

func startCluster(t *testing.T, ctx context.Context) *cluster {
	t.Helper()

	b := binaries(t)

	raw, err := talos.NewBundle("v1.13.9")
	if err != nil {
		t.Fatal(err)
	}

	bundle, err := talos.LoadBundle(raw)
	if err != nil {
		t.Fatal(err)
	}

	cp, err := kubereal.Start(ctx, kubereal.Config{
		Binaries:          b,
		Dir:               t.TempDir(),
		CA:                bundle.Certs.K8s,
		AggregatorCA:      bundle.Certs.K8sAggregator,
		ServiceAccountKey: bundle.Certs.K8sServiceAccount,
		SecretboxKey:      bundle.Secrets.SecretboxEncryptionSecret,
		Endpoint:          "https://10.0.1.100:6443",
		ServiceCIDRs:      []string{"10.96.0.0/12"},
		PodCIDRs:          []string{"10.244.0.0/16"},
	})
	if err != nil {
		t.Fatal(err)
	}

	t.Cleanup(cp.Stop)

	crt, key, err := cp.ClientCert("admin", "system:masters")
	if err != nil {
		t.Fatal(err)
	}

	kc := clientcmdapi.NewConfig()
	kc.Clusters["real"] = &clientcmdapi.Cluster{Server: cp.URL, CertificateAuthorityData: cp.CACert()}
	kc.AuthInfos["admin"] = &clientcmdapi.AuthInfo{ClientCertificateData: crt, ClientKeyData: key}
	kc.Contexts["admin@real"] = &clientcmdapi.Context{Cluster: "real", AuthInfo: "admin"}
	kc.CurrentContext = "admin@real"

	kubeconfig, err := clientcmd.Write(*kc)
	if err != nil {
		t.Fatal(err)
	}

	admin, err := kubernetes.NewForConfig(&rest.Config{Host: cp.URL, TLSClientConfig: rest.TLSClientConfig{CAData: cp.CACert(), CertData: crt, KeyData: key}})
	if err != nil {
		t.Fatal(err)
	}

	k, err := cp.StartKubelet(ctx, kubereal.KubeletConfig{Name: "n1", Version: "v1.36.3", InternalIP: "10.0.1.1"})
	if err != nil {
		t.Fatal(err)
	}

	t.Cleanup(k.Stop)

	return &cluster{cp: cp, kubeconfig: kubeconfig, admin: admin}
}

// helmVersion is the helm module go.mod pins: the stock CLI the tests
// run is built from it.
const helmVersion = "v4.3.1"

// stockHelm builds the stock helm CLI (helm.sh/helm/v4/cmd/helm, from
// the module cache) once into the user's cache, and returns its path. It
// runs in its own goroutine beside the control plane's start, so it
// returns its error instead of failing the test.
func stockHelm() (string, error) {
	base, err := os.UserCacheDir()
	if err != nil {
		return "", err
	}

	dir := filepath.Join(base, "ohmytalos", "helm", helmVersion)
	bin := filepath.Join(dir, "helm")

	if _, err := os.Stat(bin); err == nil {
		return bin, nil
	}

	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}

	tmp, err := os.CreateTemp(dir, ".helm-*")
	if err != nil {
		return "", err
	}

	tmp.Close()
	defer os.Remove(tmp.Name())

	cmd := exec.Command("go", "build", "-o", tmp.Name(), "helm.sh/helm/v4/cmd/helm")
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("build the stock helm CLI: %w\n%s", err, out)
	}

	return bin, os.Rename(tmp.Name(), bin)
}

// helmCLI runs the stock helm CLI against the cluster, with private
// helm homes.
func (c *cluster) helmCLI(t *testing.T, bin string, args ...string) []byte {
	t.Helper()

	home := t.TempDir()
	kc := filepath.Join(home, "kubeconfig")

	if err := os.WriteFile(kc, c.kubeconfig, 0o600); err != nil {
		t.Fatal(err)
	}

	cmd := exec.Command(bin, args...)
	cmd.Env = []string{
		"HOME=" + home, "KUBECONFIG=" + kc,
		"HELM_CACHE_HOME=" + filepath.Join(home, "cache"),
		"HELM_CONFIG_HOME=" + filepath.Join(home, "config"),
		"HELM_DATA_HOME=" + filepath.Join(home, "data"),
		"PATH=" + os.Getenv("PATH"),
	}

	out, err := cmd.Output()
	if err != nil {
		stderr := ""
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = string(ee.Stderr)
		}

		t.Fatalf("helm %v: %v\n%s", args, err, stderr)
	}

	return out
}

func clientcmdRESTConfig(kubeconfig []byte) (*rest.Config, error) {
	return clientcmd.RESTConfigFromKubeConfig(kubeconfig)
}
