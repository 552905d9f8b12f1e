// Package kubeconfig merges a cluster's kubeconfig into the operator's
// default one without losing anything: existing clusters, users and
// contexts are kept; a new entry whose name is taken by a different entry
// is renamed NAME-1, NAME-2, ... (as talosctl does: siderolabs/talos,
// cmd/talosctl "kubeconfig --merge" with the rename decision); the old
// file is backed up first; a symlinked file is written through its link.
package kubeconfig

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/ohmytalos/ohmytalos/internal/privatefile"
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

// Result says what a merge did.
type Result struct {
	// Context is the current context after the merge.
	Context string
	// Renamed lists the new entries that took another name, e.g.
	// `user "admin@demo" -> "admin@demo-1"`.
	Renamed []string
	// Backup is the copy of the previous file ("" when there was none, or
	// nothing changed).
	Backup string
	// Written is the file written: path, or its symlink's target ("" when
	// nothing changed).
	Written string
}

// Merge merges data into the kubeconfig at path (created if missing),
// switches the current context to the new cluster's and reports what it
// did. The file is edited as a YAML tree, so its comments and the order of
// its entries stay. now names the backup (PATH.bak-YYYYMMDDTHHMMSSZ).
func Merge(path string, data []byte, now time.Time) (Result, error) {
	var in doc
	if err := yaml.Unmarshal(data, &in); err != nil {
		return Result{}, fmt.Errorf("the cluster kubeconfig does not parse: %w", err)
	}
	target, err := privatefile.Resolve(path)
	if err != nil {
		return Result{}, err
	}
	old, cur, err := load(target)
	if err != nil {
		return Result{}, err
	}
	res, changed, err := mergeInto(cur, in)
	if err != nil {
		return Result{}, fmt.Errorf("%s: %w", target, err)
	}
	if old != nil && !changed {
		return res, nil
	}
	out, err := cur.encode()
	if err != nil {
		return Result{}, fmt.Errorf("encode the merged kubeconfig: %w", err)
	}
	if old != nil {
		res.Backup = target + ".bak-" + now.UTC().Format("20060102T150405Z")
		if _, err := privatefile.Write(res.Backup, old); err != nil {
			return Result{}, fmt.Errorf("back up %s before merging (nothing was changed): %w", target, err)
		}
	}
	if res.Written, err = privatefile.Write(target, out); err != nil {
		return Result{}, err
	}
	return res, nil
}

// mergeInto adds in's clusters, users and contexts to cur and switches
// its current context; changed is false when cur already held them all.
func mergeInto(cur *tree, in doc) (res Result, changed bool, err error) {
	clusters, c1, err := mergeNamed(cur, in, "clusters", "cluster", nil, &res.Renamed)
	if err != nil {
		return Result{}, false, err
	}
	users, c2, err := mergeNamed(cur, in, "users", "user", nil, &res.Renamed)
	if err != nil {
		return Result{}, false, err
	}
	contexts, c3, err := mergeNamed(cur, in, "contexts", "context", func(m map[string]any) map[string]any {
		return remapContext(m, clusters, users)
	}, &res.Renamed)
	if err != nil {
		return Result{}, false, err
	}
	changed = c1 || c2 || c3
	if ctx, _ := in["current-context"].(string); ctx != "" {
		res.Context = ctx
		if n := contexts[ctx]; n != "" {
			res.Context = n
		}
		if cur.scalar("current-context") != res.Context {
			cur.setScalar("current-context", res.Context)
			changed = true
		}
	}
	return res, changed, nil
}

// load reads the kubeconfig at path: its bytes (nil when missing) and its
// tree (an empty config when missing or empty).
func load(path string) ([]byte, *tree, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, newTree(), nil
	}
	if err != nil {
		return nil, nil, fmt.Errorf("read %s: %w", path, err)
	}
	t, err := parseTree(b)
	if err != nil {
		return nil, nil, fmt.Errorf("%s is not a kubeconfig (%v): fix or move it, or use --out", path, err)
	}
	return b, t, nil
}

func list(v any) []any {
	l, _ := v.([]any)
	return l
}

func entryName(v any) (map[string]any, string) {
	m, _ := v.(map[string]any)
	n, _ := m["name"].(string)
	return m, n
}

// mergeNamed appends in's entries under key to cur's, keeping every
// existing one. An entry equal to the existing one of the same name is
// not added twice; a different one is renamed to a free NAME-N. It returns
// the name each new entry has in the merged file, and whether it added
// any. fix, when set, rewrites an entry before it is compared (contexts
// name renamed clusters and users).
func mergeNamed(cur *tree, in doc, key, kind string, fix func(map[string]any) map[string]any, renamed *[]string) (map[string]string, bool, error) {
	seq, err := cur.list(key)
	if err != nil {
		return nil, false, err
	}
	have := map[string]any{}
	for _, e := range seq.Content {
		var m map[string]any
		if e.Decode(&m) == nil {
			if n, _ := m["name"].(string); n != "" {
				have[n] = m
			}
		}
	}
	names := map[string]string{}
	added := false
	for _, e := range list(in[key]) {
		m, n := entryName(e)
		if m == nil || n == "" {
			continue
		}
		if fix != nil {
			m = fix(m)
		}
		if old, ok := have[n]; ok && reflect.DeepEqual(old, m) {
			names[n] = n
			continue
		}
		name := freeName(n, have)
		if name != n {
			*renamed = append(*renamed, fmt.Sprintf("%s %q -> %q", kind, n, name))
			m = withName(m, name)
		}
		var node yaml.Node
		if err := node.Encode(m); err != nil {
			return nil, false, fmt.Errorf("encode %s %q: %w", kind, name, err)
		}
		nameFirst(&node)
		seq.Content = append(seq.Content, &node)
		names[n], have[name], added = name, m, true
	}
	return names, added, nil
}

// freeName is n when unused, else the first free n-1, n-2, ...
func freeName(n string, have map[string]any) string {
	if _, ok := have[n]; !ok {
		return n
	}
	for i := 1; ; i++ {
		c := fmt.Sprintf("%s-%d", n, i)
		if _, ok := have[c]; !ok {
			return c
		}
	}
}

// withName is a copy of m named name.
func withName(m map[string]any, name string) map[string]any {
	c := make(map[string]any, len(m))
	for k, v := range m {
		c[k] = v
	}
	c["name"] = name
	return c
}

// remapContext points a new context at the merged names of its cluster
// and user.
func remapContext(m map[string]any, clusters, users map[string]string) map[string]any {
	ctx, _ := m["context"].(map[string]any)
	if ctx == nil {
		return m
	}
	c := make(map[string]any, len(ctx))
	for k, v := range ctx {
		c[k] = v
	}
	if n, ok := c["cluster"].(string); ok && clusters[n] != "" {
		c["cluster"] = clusters[n]
	}
	if n, ok := c["user"].(string); ok && users[n] != "" {
		c["user"] = users[n]
	}
	out := withName(m, m["name"].(string))
	out["context"] = c
	return out
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
