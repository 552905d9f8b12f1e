package main

import (
	"strings"
	"testing"
)

// sandbox serve takes the real control plane by default: --real-kubernetes
// is accepted and --fake-kubernetes opts out, but not both at once.
func TestSandboxServeKubernetesFlags(t *testing.T) {
	_, err := run(t, "sandbox", "serve", "--real-kubernetes", "--fake-kubernetes")
	if err == nil || !strings.Contains(err.Error(), "--real-kubernetes and --fake-kubernetes exclude each other") {
		t.Fatalf("both flags: %v, want them refused together", err)
	}

	out, err := run(t, "sandbox", "serve", "--help")
	if err != nil {
		t.Fatal(err)
	}

	for _, flag := range []string{"--real-kubernetes", "--fake-kubernetes"} {
		if !strings.Contains(out, flag) {
			t.Errorf("sandbox serve --help names no %s:\n%s", flag, out)
		}
	}
}
