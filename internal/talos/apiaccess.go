package talos

import (
	"slices"

	"github.com/siderolabs/talos/pkg/machinery/config/types/v1alpha1"
)

// etcdBackupRole is the Talos API role that may take etcd snapshots
// (machinery role.EtcdBackup), the one talos-backup asks for.
const etcdBackupRole = "os:etcd:backup"

// allowTalosAPIAccess lets pods in namespaces reach the Talos API with the
// os:etcd:backup role (machine.features.kubernetesTalosAPIAccess; facts:
// siderolabs/talos-backup README.md). Talos accepts the feature on control
// planes only (v1alpha1 validation: "can only be enabled on control plane
// machines"), which is where etcd runs.
func allowTalosAPIAccess(mc *v1alpha1.MachineConfig, g NodeGroup, namespaces []string) {
	if len(namespaces) == 0 || g.Role != RoleControlPlane {
		return
	}

	if mc.MachineFeatures == nil {
		mc.MachineFeatures = &v1alpha1.FeaturesConfig{}
	}

	mc.MachineFeatures.KubernetesTalosAPIAccessConfig = &v1alpha1.KubernetesTalosAPIAccessConfig{
		AccessEnabled:                     new(true),
		AccessAllowedRoles:                []string{etcdBackupRole},
		AccessAllowedKubernetesNamespaces: slices.Sorted(slices.Values(namespaces)),
	}
}
