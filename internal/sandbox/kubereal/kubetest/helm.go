package kubetest

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// HelmVersion is the helm module go.mod pins: the stock CLI StockHelm
// builds comes from it.
const HelmVersion = "v4.3.1"

// StockHelm builds the stock helm CLI (helm.sh/helm/v4/cmd/helm, from the
// module cache) once into the user's cache, and returns its path. It
// returns its error instead of failing a test, so that it can run in its
// own goroutine beside a control plane's start.
func StockHelm() (string, error) {
	base, err := os.UserCacheDir()
	if err != nil {
		return "", err
	}

	dir := filepath.Join(base, "ohmytalos", "helm", HelmVersion)
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

// Helm runs the stock helm CLI bin with args against the cluster that
// kubeconfig names, with private helm homes, and returns its stdout.
func Helm(t testing.TB, bin string, kubeconfig []byte, args ...string) []byte {
	t.Helper()

	home := t.TempDir()
	kc := filepath.Join(home, "kubeconfig")

	if err := os.WriteFile(kc, kubeconfig, 0o600); err != nil {
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
		if ee := (*exec.ExitError)(nil); errors.As(err, &ee) {
			stderr = string(ee.Stderr)
		}

		t.Fatalf("helm %v: %v\n%s", args, err, stderr)
	}

	return out
}
