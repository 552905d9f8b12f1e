package talos

import (
	"slices"
	"testing"
)

// TestRenderTalosAPIAccessForBackups: with backup namespaces, control
// planes (and only they: Talos refuses the feature elsewhere) let those
// namespaces take etcd snapshots; without, the feature stays off.
func TestRenderTalosAPIAccessForBackups(t *testing.T) {
	b := testBundle(t)
	cases := []struct {
		name  string
		ns    []string
		group NodeGroup
		want  bool
	}{
		{"control plane with backups", []string{"kube-system"}, controlPlaneGroup(), true},
		{"worker with backups", []string{"kube-system"}, workerGroup(), false},
		{"control plane without backups", nil, controlPlaneGroup(), false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := testCluster()
			c.TalosAPIAccessNamespaces = tc.ns
			// render validates the document set as Talos does.
			_, d := render(t, b, c, tc.group)
			f := d.v1.MachineConfig.MachineFeatures
			on := f != nil && f.KubernetesTalosAPIAccessConfig != nil
			if on != tc.want {
				t.Fatalf("kubernetesTalosAPIAccess set = %v, want %v", on, tc.want)
			}
			if !on {
				return
			}
			a := f.KubernetesTalosAPIAccessConfig
			if a.AccessEnabled == nil || !*a.AccessEnabled || !slices.Equal(a.AccessAllowedRoles, []string{"os:etcd:backup"}) ||
				!slices.Equal(a.AccessAllowedKubernetesNamespaces, tc.ns) {
				t.Errorf("kubernetesTalosAPIAccess = %+v", a)
			}
		})
	}
}
