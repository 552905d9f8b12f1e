package kubebin

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// wantStamp describes the build the cache must hold: the module versions,
// a digest of the tools modules' go.mod and go.sum and the version flags,
// and the Go toolchain (a binary built by another Go is rebuilt).
func wantStamp(ctx context.Context, goBin string) (string, error) {
	out, err := exec.CommandContext(ctx, goBin, "env", "GOVERSION").Output()
	if err != nil {
		return "", fmt.Errorf("ask go for its version (go env GOVERSION): %w; check the go command on PATH", err)
	}

	h := sha256.New()
	for _, b := range [][]byte{kubeGoMod, kubeGoSum, etcdGoMod, etcdGoSum, []byte(versionLDFlags() + " -s -w")} {
		h.Write(b)
	}

	return fmt.Sprintf("k8s.io/kubernetes %s\ngo.etcd.io/etcd/server/v3 %s\n%s\nmodules %s\n",
		KubernetesVersion, EtcdVersion, strings.TrimSpace(string(out)), hex.EncodeToString(h.Sum(nil))[:16]), nil
}

func readStamp(dir string) string {
	b, err := os.ReadFile(filepath.Join(dir, "stamp"))
	if err != nil {
		return ""
	}

	return string(b)
}
