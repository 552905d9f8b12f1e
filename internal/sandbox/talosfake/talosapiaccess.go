package talosfake

import (
	"github.com/siderolabs/talos/pkg/machinery/config/configloader"
)

// talosServiceAccountCRD is the CustomResourceDefinition Talos installs for
// machine.features.kubernetesTalosAPIAccess: namespaced talos.dev/v1alpha1
// ServiceAccount objects whose spec.roles ask for Talos API roles (Talos
// release notes v1.2, "Talos API access from Kubernetes"; talosctl inject
// serviceaccount writes them). Talos' controller answers each with a Secret
// holding a talosconfig; the sandbox installs the definition only, so
// applying such objects works as on a real control plane.
func talosServiceAccountCRD() map[string]any {
	return map[string]any{
		"apiVersion": "apiextensions.k8s.io/v1",
		"kind":       "CustomResourceDefinition",
		"metadata":   map[string]any{"name": "serviceaccounts.talos.dev"},
		"spec": map[string]any{
			"group": "talos.dev",
			"scope": "Namespaced",
			"names": map[string]any{
				"kind": "ServiceAccount", "listKind": "ServiceAccountList",
				"plural": "serviceaccounts", "singular": "serviceaccount",
			},
			"versions": []any{map[string]any{
				"name": "v1alpha1", "served": true, "storage": true,
				"schema": map[string]any{"openAPIV3Schema": map[string]any{
					"type": "object",
					"properties": map[string]any{
						"spec": map[string]any{"type": "object", "properties": map[string]any{
							"roles": map[string]any{"type": "array", "items": map[string]any{"type": "string"}},
						}},
					},
				}},
			}},
		},
	}
}

// talosAPIAccessEnabled reports whether a machine config turns on
// machine.features.kubernetesTalosAPIAccess.
func talosAPIAccessEnabled(raw []byte) bool {
	provider, err := configloader.NewFromBytes(raw)
	if err != nil || provider.Machine() == nil || provider.Machine().Features() == nil {
		return false
	}

	access := provider.Machine().Features().KubernetesTalosAPIAccess()

	return access != nil && access.Enabled()
}
