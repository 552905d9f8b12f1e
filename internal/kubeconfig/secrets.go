package kubeconfig

import (
	"fmt"

	"go.yaml.in/yaml/v3"
)

// credentials is the part of a kubeconfig that authenticates its users
// (clientcmd's api/v1 AuthInfo: client-key-data, token, password).
type credentials struct {
	Users []struct {
		User struct {
			ClientKeyData string `yaml:"client-key-data"`
			Token         string `yaml:"token"`
			Password      string `yaml:"password"`
		} `yaml:"user"`
	} `yaml:"users"`
}

// Secrets returns a kubeconfig's credentials, for redaction: the users'
// tokens and passwords in values, their client keys (base64 of PEM, as
// client-key-data holds them) in keys.
func Secrets(data []byte) (values, keys []string, err error) {
	var c credentials
	if err := yaml.Unmarshal(data, &c); err != nil {
		return nil, nil, fmt.Errorf("read kubeconfig credentials: %w", err)
	}
	for _, u := range c.Users {
		values = append(values, u.User.Token, u.User.Password)
		if u.User.ClientKeyData != "" {
			keys = append(keys, u.User.ClientKeyData)
		}
	}
	return values, keys, nil
}
