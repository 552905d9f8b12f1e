// Package kubeconfig merges a cluster's kubeconfig into the operator's
// default one, the way "talosctl kubeconfig" and "kubectl config" do:
// entries with the same name are replaced, others are kept, and the
// current context switches to the new cluster.
package kubeconfig

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"gopkg.in/yaml.v3"
)

// DefaultPath is the first entry of $KUBECONFIG, else ~/.kube/config.
func DefaultPath() (string, error) {
	if k := os.Getenv("KUBECONFIG"); k != "" {
		return filepath.SplitList(k)[0], nil
	}
	h, err := os.UserHomeDir()
	if err != nil {
		return "", fmt.Errorf("find home directory: %w", err)
	}
	return filepath.Join(h, ".kube", "config"), nil
}

type doc = map[string]any

// Merge merges data into the kubeconfig at path (created if missing) and
// returns the context it switched to.
func Merge(path string, data []byte) (string, error) {
	var in doc
	if err := yaml.Unmarshal(data, &in); err != nil {
		return "", fmt.Errorf("the cluster kubeconfig does not parse: %w", err)
	}
	cur := doc{"apiVersion": "v1", "kind": "Config", "preferences": map[string]any{}}
	b, err := os.ReadFile(path)
	switch {
	case errors.Is(err, os.ErrNotExist):
	case err != nil:
		return "", fmt.Errorf("read %s: %w", path, err)
	default:
		if err := yaml.Unmarshal(b, &cur); err != nil {
			return "", fmt.Errorf("%s is not a kubeconfig (%v): fix or move it, or use --out", path, err)
		}
		if cur == nil {
			cur = doc{"apiVersion": "v1", "kind": "Config"}
		}
	}
	for _, key := range []string{"clusters", "users", "contexts"} {
		cur[key] = mergeNamed(list(cur[key]), list(in[key]))
	}
	ctx, _ := in["current-context"].(string)
	if ctx != "" {
		cur["current-context"] = ctx
	}
	out, err := yaml.Marshal(cur)
	if err != nil {
		return "", err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return "", err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".kubeconfig-*")
	if err != nil {
		return "", err
	}
	defer os.Remove(tmp.Name())
	if err := tmp.Chmod(0o600); err != nil {
		tmp.Close()
		return "", err
	}
	if _, err := tmp.Write(out); err != nil {
		tmp.Close()
		return "", err
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return "", err
	}
	if err := tmp.Close(); err != nil {
		return "", err
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return "", fmt.Errorf("write %s: %w", path, err)
	}
	return ctx, nil
}

func list(v any) []any {
	l, _ := v.([]any)
	return l
}

// mergeNamed replaces entries of cur whose name is in add, keeps the rest.
func mergeNamed(cur, add []any) []any {
	names := map[string]bool{}
	for _, a := range add {
		if m, ok := a.(map[string]any); ok {
			if n, ok := m["name"].(string); ok {
				names[n] = true
			}
		}
	}
	var out []any
	for _, c := range cur {
		if m, ok := c.(map[string]any); ok {
			if n, ok := m["name"].(string); ok && names[n] {
				continue
			}
		}
		out = append(out, c)
	}
	return append(out, add...)
}

// Server returns the API server URL of the current context's cluster.
func Server(data []byte) (string, error) {
	var d struct {
		Current  string `yaml:"current-context"`
		Contexts []struct {
			Name    string `yaml:"name"`
			Context struct {
				Cluster string `yaml:"cluster"`
			} `yaml:"context"`
		} `yaml:"contexts"`
		Clusters []struct {
			Name    string `yaml:"name"`
			Cluster struct {
				Server string `yaml:"server"`
			} `yaml:"cluster"`
		} `yaml:"clusters"`
	}
	if err := yaml.Unmarshal(data, &d); err != nil {
		return "", err
	}
	cluster := ""
	for _, c := range d.Contexts {
		if c.Name == d.Current {
			cluster = c.Context.Cluster
		}
	}
	for _, c := range d.Clusters {
		if c.Name == cluster || (cluster == "" && len(d.Clusters) == 1) {
			return strings.TrimSpace(c.Cluster.Server), nil
		}
	}
	return "", errors.New("no cluster for the current context")
}
