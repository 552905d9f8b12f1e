package kubebin

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// external is a binary the environment names.
type external struct {
	path string
	from string // "OHMYTALOS_KUBE_BIN_DIR=/dir"
	// key is the file as its version was checked: Verify checks it again
	// once it changes.
	key fileKey
}

// fromEnvironment returns the binaries BinDirEnv (all four) and AssetsEnv
// (etcd and kube-apiserver) name, each checked with --version against the
// pinned version. A variable that is set must be right: a missing binary
// or another version is an error that says which and what to do.
func fromEnvironment(ctx context.Context, getenv func(string) string) (map[string]external, error) {
	out := map[string]external{}

	for _, v := range []struct {
		env   string
		names []string
		fix   string
	}{
		{BinDirEnv, []string{"etcd", "kube-apiserver", "kube-controller-manager", "kube-scheduler"},
			"point it at a directory with all four at the pinned versions, or unset it to build them"},
		{AssetsEnv, []string{"etcd", "kube-apiserver"},
			"point it at the " + strings.TrimPrefix(KubernetesVersion, "v") + " assets (setup-envtest use " + strings.TrimPrefix(KubernetesVersion, "v") + " -p path), or unset it to build them"},
	} {
		dir := getenv(v.env)
		if dir == "" {
			continue
		}

		for _, name := range v.names {
			if _, ok := out[name]; ok {
				continue
			}

			path := filepath.Join(dir, name)
			key, _ := statKey(path)

			if err := checkVersion(ctx, path, name); err != nil {
				return nil, fmt.Errorf("%s=%s: %w: %s", v.env, dir, err, v.fix)
			}

			out[name] = external{path: path, from: v.env + "=" + dir, key: key}
		}
	}

	return out, nil
}

// checkVersion runs path --version and compares it with the pinned
// version: etcd prints "etcd Version: 3.6.16", the Kubernetes programs
// "Kubernetes v1.36.3".
func checkVersion(ctx context.Context, path, name string) error {
	st, err := os.Stat(path)
	if err != nil {
		return fmt.Errorf("no %s there (%w)", name, err)
	}

	if !st.Mode().IsRegular() || st.Mode().Perm()&0o111 == 0 {
		return fmt.Errorf("%s is not an executable file", path)
	}

	want, prefix := "Kubernetes "+KubernetesVersion, "Kubernetes "
	if name == "etcd" {
		want, prefix = "etcd Version: "+strings.TrimPrefix(EtcdVersion, "v"), "etcd Version: "
	}

	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()

	b, err := exec.CommandContext(ctx, path, "--version").CombinedOutput()
	if err != nil {
		return fmt.Errorf("%s --version failed: %w: %s", path, err, lastLines(string(b), 3))
	}

	got := ""

	for line := range strings.Lines(string(b)) {
		if strings.HasPrefix(line, prefix) {
			got = strings.TrimSpace(line)
		}
	}

	if got != want {
		if got == "" {
			got = strings.TrimSpace(lastLines(string(b), 1))
		}

		return fmt.Errorf("%s reports %q, the sandbox needs %q", path, got, want)
	}

	return nil
}
