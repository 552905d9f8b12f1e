package main

import (
	"strings"
	"testing"
)

// sandbox serve runs only the real control plane: --fake-kubernetes is no
// flag any more, --real-kubernetes is accepted but deprecated and hidden,
// and the help says what serves the Kubernetes API.
func TestSandboxServeKubernetesFlags(t *testing.T) {
	_, err := run(t, "sandbox", "serve", "--fake-kubernetes")
	if err == nil || !strings.Contains(err.Error(), "unknown flag: --fake-kubernetes") {
		t.Fatalf("--fake-kubernetes: %v, want it refused as an unknown flag", err)
	}

	serve, _, err := newRootCmd().Find([]string{"sandbox", "serve"})
	if err != nil {
		t.Fatal(err)
	}

	if f := serve.Flags().Lookup("real-kubernetes"); f == nil || f.Deprecated == "" {
		t.Errorf("--real-kubernetes = %+v, want it accepted and deprecated", f)
	}

	out, err := run(t, "sandbox", "serve", "--help")
	if err != nil {
		t.Fatal(err)
	}

	for _, flag := range []string{"--real-kubernetes", "--fake-kubernetes"} {
		if strings.Contains(out, flag) {
			t.Errorf("sandbox serve --help still names %s:\n%s", flag, out)
		}
	}

	if !strings.Contains(out, "real kube-apiserver") {
		t.Errorf("sandbox serve --help does not say what serves the Kubernetes API:\n%s", out)
	}
}
