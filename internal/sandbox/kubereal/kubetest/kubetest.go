// Package kubetest starts a real Kubernetes control plane (kubereal) for
// a test, configured from a fresh Talos secrets bundle and the machine
// config Talos' own generator makes from it, as a Talos control plane
// runs it (PodSecurity admission included). Only _test files import it.
package kubetest

import (
	"context"
	"os/exec"
	"testing"
	"time"

	"github.com/siderolabs/talos/pkg/machinery/config/generate"
	"github.com/siderolabs/talos/pkg/machinery/config/machine"

	"github.com/ohmytalos/ohmytalos/internal/sandbox/kubereal"
	"github.com/ohmytalos/ohmytalos/internal/sandbox/kubereal/kubebin"
	"github.com/ohmytalos/ohmytalos/internal/talos"
)

// BuildTimeout bounds building the binaries on a fresh machine (about
// ten minutes on two busy cores; reused from the user's cache after).
const BuildTimeout = 25 * time.Minute

// Binaries are the control plane's programs, built on first use; the test
// skips without go on PATH and fails when the build fails.
func Binaries(t testing.TB) kubebin.Binaries {
	t.Helper()

	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("the real Kubernetes control plane is built from source: no go command on PATH")
	}

	ctx, cancel := context.WithTimeout(context.Background(), BuildTimeout)
	defer cancel()

	bins, err := kubebin.Ensure(ctx, kubebin.Options{})
	if err != nil {
		t.Fatal(err)
	}

	return bins
}

// Start runs a control plane for cluster name until ctx ends or the test
// is over.
func Start(t testing.TB, ctx context.Context, name string) *kubereal.ControlPlane {
	t.Helper()

	b := Binaries(t)

	raw, err := talos.NewBundle("v1.13.9")
	if err != nil {
		t.Fatal(err)
	}

	bundle, err := talos.LoadBundle(raw)
	if err != nil {
		t.Fatal(err)
	}

	in, err := generate.NewInput(name, "https://10.0.1.100:6443", "1.36.3", generate.WithSecretsBundle(bundle))
	if err != nil {
		t.Fatal(err)
	}

	mc, err := in.Config(machine.TypeControlPlane)
	if err != nil {
		t.Fatal(err)
	}

	cl := mc.Cluster()
	start := time.Now()

	cp, err := kubereal.Start(ctx, kubereal.Config{
		Binaries:          b,
		Dir:               t.TempDir(),
		CA:                bundle.Certs.K8s,
		AggregatorCA:      bundle.Certs.K8sAggregator,
		ServiceAccountKey: bundle.Certs.K8sServiceAccount,
		SecretboxKey:      bundle.Secrets.SecretboxEncryptionSecret,
		Endpoint:          cl.Endpoint().String(),
		ServiceCIDRs:      cl.Network().ServiceCIDRs(),
		PodCIDRs:          cl.Network().PodCIDRs(),
		Admission:         kubereal.AdmissionFromTalos(cl.APIServer().AdmissionControl()),
	})
	if err != nil {
		t.Fatal(err)
	}

	t.Logf("control plane ready in %s at %s", time.Since(start).Round(time.Millisecond), cp.URL)
	t.Cleanup(cp.Stop)

	return cp
}
