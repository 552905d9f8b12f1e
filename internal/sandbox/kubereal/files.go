package kubereal

import (
	"encoding/json"
	"fmt"
	"path/filepath"
)

// writeAdmissionConfig writes kube-apiserver's AdmissionConfiguration as
// Talos renders admission-control-config.yaml from
// cluster.apiServer.admissionControl (siderolabs/talos
// internal/app/machined/pkg/controllers/k8s/render_config_static_pods.go,
// admissionControlConfig). JSON is YAML.
func (c *Config) writeAdmissionConfig() (string, error) {
	type plugin struct {
		Name          string         `json:"name"`
		Configuration map[string]any `json:"configuration"`
	}

	doc := struct {
		APIVersion string   `json:"apiVersion"`
		Kind       string   `json:"kind"`
		Plugins    []plugin `json:"plugins"`
	}{APIVersion: "apiserver.config.k8s.io/v1", Kind: "AdmissionConfiguration", Plugins: []plugin{}}

	for _, p := range c.Admission {
		doc.Plugins = append(doc.Plugins, plugin(p))
	}

	return c.writeJSON("admission-control-config.yaml", doc)
}

// writeEncryptionConfig writes the EncryptionConfiguration Talos gives
// kube-apiserver (--encryption-provider-config): secretbox with the
// bundle's key for Secrets, identity to read what was stored before
// (siderolabs/talos internal/app/machined/pkg/controllers/secrets/kubernetes.go).
func (c *Config) writeEncryptionConfig() (string, error) {
	if c.SecretboxKey == "" {
		return "", nil
	}

	doc := map[string]any{
		"apiVersion": "apiserver.config.k8s.io/v1",
		"kind":       "EncryptionConfiguration",
		"resources": []any{map[string]any{
			"resources": []string{"secrets"},
			"providers": []any{
				map[string]any{"secretbox": map[string]any{"keys": []any{map[string]any{"name": "key2", "secret": c.SecretboxKey}}}},
				map[string]any{"identity": map[string]any{}},
			},
		}},
	}

	return c.writeJSON("encryptionconfig.yaml", doc)
}

func (c *Config) writeJSON(name string, doc any) (string, error) {
	b, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		return "", fmt.Errorf("encode %s: %w", name, err)
	}

	p := filepath.Join(c.Dir, "pki", name)
	if err := writeFile(p, b); err != nil {
		return "", fmt.Errorf("write %s: %w", p, err)
	}

	return p, nil
}
