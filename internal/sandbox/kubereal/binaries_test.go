//go:build unix

package kubereal_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ohmytalos/ohmytalos/internal/sandbox/kubereal"
	"github.com/ohmytalos/ohmytalos/internal/sandbox/kubereal/kubebin"
	"github.com/ohmytalos/ohmytalos/internal/talos"
)

// A program not verified by kubebin is not started: a script in place of
// etcd never runs, and the error names it.
func TestStartRunsNoUnverifiedBinary(t *testing.T) {
	dir := t.TempDir()
	ran := filepath.Join(dir, "ran")
	script := filepath.Join(dir, "etcd")

	if err := os.WriteFile(script, []byte("#!/bin/sh\ntouch "+ran+"\nsleep 600\n"), 0o755); err != nil {
		t.Fatal(err)
	}

	raw, err := talos.NewBundle("v1.13.9")
	if err != nil {
		t.Fatal(err)
	}

	bundle, err := talos.LoadBundle(raw)
	if err != nil {
		t.Fatal(err)
	}

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()

	cp, err := kubereal.Start(ctx, kubereal.Config{
		Binaries:          kubebin.Binaries{Etcd: script, APIServer: script, ControllerManager: script, Scheduler: script},
		Dir:               t.TempDir(),
		CA:                bundle.Certs.K8s,
		ServiceAccountKey: bundle.Certs.K8sServiceAccount,
		Endpoint:          "https://10.0.1.100:6443",
		ServiceCIDRs:      []string{"10.96.0.0/12"},
	})
	if err == nil {
		cp.Stop()
	}

	if err == nil || !strings.Contains(err.Error(), "etcd (\""+script+"\") was not found or checked by kubebin.Ensure") {
		t.Errorf("Start with binaries not from kubebin.Ensure = %v, want an error naming etcd", err)
	}

	if _, serr := os.Stat(ran); serr == nil {
		t.Error("the unverified etcd ran")
	}
}
