package talos

import (
	"errors"
	"strings"
	"testing"

	"github.com/siderolabs/talos/pkg/machinery/config/types/network"
)

func TestRenderStrategicMergePatch(t *testing.T) {
	g := workerGroup()
	g.Patches = []Patch{
		{Name: "talos.patches[0]", Data: []byte("machine: {time: {servers: [time.cloudflare.com]}}\n")},
		{Name: "pools[0].patches[0]", Data: []byte("machine: {sysctls: {net.core.somaxconn: \"65535\"}}\n")},
	}

	r, d := render(t, testBundle(t), testCluster(), g)

	if got := d.v1.MachineConfig.MachineTime.TimeServers; len(got) != 1 || got[0] != "time.cloudflare.com" {
		t.Errorf("machine.time.servers = %v, want [time.cloudflare.com]", got)
	}

	if got := d.v1.MachineConfig.MachineSysctls["net.core.somaxconn"]; got != "65535" {
		t.Errorf("machine.sysctls[net.core.somaxconn] = %q, want 65535", got)
	}

	if len(r.PatchWarnings) != 0 {
		t.Errorf("warnings = %v, want none", r.PatchWarnings)
	}

	// ohmytalos's own documents survive the merge.
	if len(d.docs) < 3 {
		t.Errorf("documents = %d, want the volumes kept", len(d.docs))
	}
}

func TestRenderJSON6902Patch(t *testing.T) {
	g := workerGroup()
	g.Patches = []Patch{{Name: "pools[0].patches[0]", Data: []byte("- op: add\n  path: /machine/sysctls\n  value: {vm.max_map_count: \"262144\"}\n")}}

	_, d := render(t, testBundle(t), testCluster(), g)

	if got := d.v1.MachineConfig.MachineSysctls["vm.max_map_count"]; got != "262144" {
		t.Errorf("machine.sysctls[vm.max_map_count] = %q, want 262144", got)
	}

	if len(d.docs) < 3 {
		t.Errorf("documents = %d: the JSON patch must keep the other documents", len(d.docs))
	}
}

func TestRenderMultiDocumentPatch(t *testing.T) {
	g := controlPlaneGroup()
	g.Patches = []Patch{{Name: "controlPlane.patches[0] (@patches/cp.yaml)", Data: []byte(
		"machine: {sysctls: {kernel.pid_max: \"4194304\"}}\n---\napiVersion: v1alpha1\nkind: TimeSyncConfig\nntp: {servers: [ntp.example.com]}\n")}}

	_, d := render(t, testBundle(t), testCluster(), g)

	if got := d.v1.MachineConfig.MachineSysctls["kernel.pid_max"]; got != "4194304" {
		t.Errorf("kernel.pid_max = %q", got)
	}

	found := false

	for _, doc := range d.docs {
		found = found || doc.Kind() == "TimeSyncConfig"
	}

	if !found {
		t.Error("the patch's TimeSyncConfig document is missing")
	}
}

func TestRenderBadPatchNamesIt(t *testing.T) {
	for name, tc := range map[string]struct {
		data string
		want string
	}{
		"unknown key":        {"machine: {nosuchkey: 1}\n", "not a Talos machine-config patch"},
		"json op fails":      {"- op: remove\n  path: /machine/nosuch\n", "JSON 6902"},
		"fails validation":   {"machine: {nodeTaints: {a: b:Wrong}}\n", "fails Talos validation after the patch controlPlane.patches[1]"},
		"not a patch at all": {"just a string\n", "not a Talos machine-config patch"},
	} {
		t.Run(name, func(t *testing.T) {
			g := controlPlaneGroup()
			g.Patches = []Patch{{Name: "controlPlane.patches[1]", Data: []byte(tc.data)}}

			_, err := Render(testBundle(t), testCluster(), g)
			if err == nil {
				t.Fatal("Render accepted the bad patch")
			}

			if !strings.Contains(err.Error(), "controlPlane.patches[1]") || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error = %v, want it to name the patch and say %q", err, tc.want)
			}
		})
	}
}

func TestRenderSizeLimitAfterPatch(t *testing.T) {
	g := workerGroup()
	g.Patches = []Patch{{Name: "pools[0].patches[0]", Data: []byte("machine: {sysctls: {big.value: \"" + strings.Repeat("x", UserDataLimit) + "\"}}\n")}}

	_, err := Render(testBundle(t), testCluster(), g)
	if !errors.Is(err, ErrConfigTooLarge) || !strings.Contains(err.Error(), "pools[0].patches[0]") {
		t.Fatalf("error = %v, want ErrConfigTooLarge naming the patch", err)
	}
}

func TestPatchWarnings(t *testing.T) {
	g := controlPlaneGroup()
	g.Patches = []Patch{
		{Name: "talos.patches[0]", Data: []byte("machine: {time: {servers: [time.cloudflare.com]}}\n")},
		{Name: "controlPlane.patches[0]", Data: []byte("cluster: {network: {cni: {name: flannel}}, proxy: {disabled: false}}\n")},
		{Name: "controlPlane.patches[1]", Data: []byte("- op: replace\n  path: /machine/install/disk\n  value: /dev/vda\n")},
		{Name: "controlPlane.patches[2]", Data: []byte("apiVersion: v1alpha1\nkind: HCloudVIPConfig\nname: 10.0.1.100\nlink: enp7s0\n")},
	}

	r, d := render(t, testBundle(t), testCluster(), g)

	if d.v1.ClusterConfig.ClusterNetwork.CNI.CNIName != "flannel" {
		t.Fatalf("the CNI patch did not apply")
	}

	if v := find[*network.HCloudVIPConfigV1Alpha1](d); len(v) != 1 || v[0].LinkName != "enp7s0" {
		t.Fatalf("VIP documents = %v", v)
	}

	want := map[string]string{
		"cluster.network.cni.name": "controlPlane.patches[0]",
		"cluster.proxy.disabled":   "controlPlane.patches[0]",
		"machine.install.disk":     "controlPlane.patches[1]",
		"HCloudVIPConfig":          "controlPlane.patches[2]",
	}

	if len(r.PatchWarnings) != len(want) {
		t.Errorf("warnings = %q, want %d", r.PatchWarnings, len(want))
	}

	for setting, patch := range want {
		found := false

		for _, w := range r.PatchWarnings {
			found = found || strings.Contains(w, "patch "+patch+" changes "+setting+" ")
		}

		if !found {
			t.Errorf("no warning names %s and %s in %q", patch, setting, r.PatchWarnings)
		}
	}
}

func TestDiffConfigsNamesChangedPaths(t *testing.T) {
	g := workerGroup()
	base, _ := render(t, testBundle(t), testCluster(), g)

	g.Patches = []Patch{{Name: "pools[0].patches[0]", Data: []byte("machine: {sysctls: {net.core.somaxconn: \"65535\"}, time: {servers: [a.example]}}\n")}}
	next, _ := render(t, testBundle(t), testCluster(), g)

	changes, err := DiffConfigs(base.Config, next.Config)
	if err != nil {
		t.Fatal(err)
	}

	got := map[string]PathChange{}
	for _, c := range changes {
		got[c.Path] = c
	}

	if c, ok := got[`v1alpha1: machine.sysctls["net.core.somaxconn"]`]; !ok || c.Old != "" || c.New != `"65535"` {
		t.Errorf("sysctl change = %+v in %+v", c, changes)
	}

	if _, ok := got["v1alpha1: machine.time.servers"]; !ok {
		t.Errorf("no machine.time.servers change in %+v", changes)
	}

	if len(changes) != 2 {
		t.Errorf("changes = %+v, want exactly 2", changes)
	}

	if same, err := DiffConfigs(base.Config, base.Config); err != nil || len(same) != 0 {
		t.Errorf("a config against itself = %+v, %v", same, err)
	}

	for _, c := range changes {
		if strings.Contains(c.Old+c.New, testHCloudToken) || strings.Contains(c.Old+c.New, testPassphrase) {
			t.Errorf("a secret leaked into %+v", c)
		}
	}
}

func TestDiffConfigsRedactsPatchSecrets(t *testing.T) {
	g := workerGroup()
	base, _ := render(t, testBundle(t), testCluster(), g)

	g.Patches = []Patch{{Name: "talos.patches[0]", Data: []byte("machine: {registries: {config: {ghcr.io: {auth: {username: bot, password: s3cr3t-registry-pass}}}}}\n")}}
	next, _ := render(t, testBundle(t), testCluster(), g)

	changes, err := DiffConfigs(base.Config, next.Config)
	if err != nil || len(changes) == 0 {
		t.Fatalf("changes = %+v, %v", changes, err)
	}

	for _, c := range changes {
		if strings.Contains(c.Path+c.Old+c.New, "s3cr3t-registry-pass") {
			t.Errorf("the registry password leaked into %+v", c)
		}
	}
}

func TestValidationFailureNamesTheCulprit(t *testing.T) {
	g := controlPlaneGroup()
	g.Patches = []Patch{
		{Name: "talos.patches[0]", Data: []byte("machine: {time: {servers: [time.cloudflare.com]}}\n")},
		{Name: "controlPlane.patches[0] (@patches/cp.yaml)", Data: []byte("machine: {nodeTaints: {a: b:Wrong}}\n")},
		{Name: "controlPlane.patches[1]", Data: []byte("machine: {sysctls: {a.b: \"1\"}}\n")},
	}

	_, err := Render(testBundle(t), testCluster(), g)
	if err == nil || !strings.Contains(err.Error(), "after the patch controlPlane.patches[0] (@patches/cp.yaml):") {
		t.Fatalf("error = %v, want it to name controlPlane.patches[0] (@patches/cp.yaml) alone", err)
	}
}
