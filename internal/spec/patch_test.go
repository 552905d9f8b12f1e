package spec

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const patchedSpec = `name: demo
talos:
  patches:
    - machine: {time: {servers: [time.cloudflare.com]}}
controlPlane:
  patches: ["@patches/cp.yaml"]
pools:
  - name: worker
    count: 2
    patches:
      - machine: {sysctls: {net.core.somaxconn: "65535"}}
      - [{op: add, path: /machine/sysctls/vm.max_map_count, value: "262144"}]
`

func writeSpec(t *testing.T, body, cp string) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "patches"), 0o755); err != nil {
		t.Fatal(err)
	}
	if cp != "" {
		if err := os.WriteFile(filepath.Join(dir, "patches", "cp.yaml"), []byte(cp), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	path := filepath.Join(dir, "ohmytalos.yaml")
	if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestPatchesLoadInOrder(t *testing.T) {
	s, err := Load(writeSpec(t, patchedSpec, "machine: {sysctls: {kernel.pid_max: \"4194304\"}}\n"))
	if err != nil {
		t.Fatal(err)
	}
	cp, err := s.PatchesFor(RoleControlPlane)
	if err != nil {
		t.Fatal(err)
	}
	if len(cp) != 2 || cp[0].Name != "talos.patches[0]" || cp[1].Name != "controlPlane.patches[0] (@patches/cp.yaml)" ||
		!strings.Contains(string(cp[1].Data), "kernel.pid_max") {
		t.Errorf("control plane patches = %+v", cp)
	}
	w, err := s.PatchesFor("worker")
	if err != nil {
		t.Fatal(err)
	}
	if len(w) != 3 || w[1].Name != "pools[0].patches[0]" || w[2].Name != "pools[0].patches[1]" || !strings.Contains(string(w[2].Data), "op: add") {
		t.Errorf("worker patches = %+v", w)
	}
	out, err := s.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(out), "'@patches/cp.yaml'") && !strings.Contains(string(out), `"@patches/cp.yaml"`) {
		t.Errorf("Marshal lost the file reference:\n%s", out)
	}
}

func TestPatchFileChangesHash(t *testing.T) {
	path := writeSpec(t, patchedSpec, "machine: {sysctls: {kernel.pid_max: \"4194304\"}}\n")
	a, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(filepath.Dir(path), "patches", "cp.yaml"), []byte("machine: {sysctls: {kernel.pid_max: \"65536\"}}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	b, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if a.Hash() == b.Hash() {
		t.Error("the spec's hash does not change with its patch file")
	}
}

func TestBadPatchesAreProblems(t *testing.T) {
	for name, tc := range map[string]struct {
		body, cp, field, reason string
	}{
		"missing file": {patchedSpec, "", "controlPlane.patches[0] (@patches/cp.yaml)", "cannot read the patch file"},
		"bad file":     {patchedSpec, "machine: {nosuch: 1}\n", "controlPlane.patches[0] (@patches/cp.yaml)", "not a Talos machine-config patch"},
		"scalar":       {"name: demo\ntalos:\n  patches: [hello]\n", "", "talos.patches[0]", "neither a map, a list nor"},
		"unknown key":  {"name: demo\npools:\n  - name: worker\n    patches: [{machine: {sysctl: {a: b}}}]\n", "", "pools[0].patches[0]", "not a Talos machine-config patch"},
		"empty file":   {"name: demo\ncontrolPlane:\n  patches: ['@']\n", "", "controlPlane.patches[0]", `"@" names no file`},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := Load(writeSpec(t, tc.body, tc.cp))
			if err == nil {
				t.Fatal("Load accepted the bad patch")
			}
			if !strings.Contains(err.Error(), tc.field+": ") || !strings.Contains(err.Error(), tc.reason) || !strings.Contains(err.Error(), "fix: ") {
				t.Errorf("error = %v, want %q with %q and a fix", err, tc.field, tc.reason)
			}
		})
	}
}
