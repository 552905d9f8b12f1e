package talos

import (
	"fmt"

	"go.yaml.in/yaml/v4"
)

// talosconfigKeys is the part of a talosconfig that authenticates (the
// machinery's client/config Context: ca, crt, key, each base64 of PEM).
type talosconfigKeys struct {
	Contexts map[string]struct {
		Key string `yaml:"key"`
	} `yaml:"contexts"`
}

// TalosconfigSecrets returns the client keys of a talosconfig (base64 of
// PEM), for redaction.
func TalosconfigSecrets(data []byte) ([]string, error) {
	var c talosconfigKeys
	if err := yaml.Unmarshal(data, &c); err != nil {
		return nil, fmt.Errorf("read talosconfig keys: %w", err)
	}
	var keys []string
	for _, ctx := range c.Contexts {
		if ctx.Key != "" {
			keys = append(keys, ctx.Key)
		}
	}
	return keys, nil
}
