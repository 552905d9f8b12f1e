package doctor

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"go.yaml.in/yaml/v3"
)

const noRepo = "no --repo: the doctor was not given the operator's repository"

// maxRepoFile bounds the files the repository checks read.
const maxRepoFile = 1 << 20

// walkRepo calls fn for every regular file under dir with its slash-separated
// path relative to dir, skipping VCS and dependency folders and big files.
func walkRepo(dir string, fn func(rel string, data []byte) error) error {
	return filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			switch d.Name() {
			case ".git", "node_modules", "vendor", ".terraform":
				if path != dir {
					return filepath.SkipDir
				}
			}
			return nil
		}
		if !d.Type().IsRegular() {
			return nil
		}
		info, err := d.Info()
		if err != nil || info.Size() > maxRepoFile {
			return nil
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(dir, path)
		if err != nil {
			return err
		}
		return fn(filepath.ToSlash(rel), data)
	})
}

func checkRepoDir(dir string) error {
	st, err := os.Stat(dir)
	if err != nil {
		return fmt.Errorf("read repository %s: %w", dir, err)
	}
	if !st.IsDir() {
		return fmt.Errorf("repository %s is not a directory", dir)
	}
	return nil
}

func repoError(err error) Result {
	return Result{Status: StatusError, Explanation: err.Error(), Fix: "pass --repo with the path of the cluster's GitOps repository"}
}

func isYAML(rel string) bool {
	l := strings.ToLower(rel)
	return strings.HasSuffix(l, ".yaml") || strings.HasSuffix(l, ".yml")
}

// yamlDocs decodes every document of data into generic maps; documents that
// are not mappings are returned as nil entries.
func yamlDocs(data []byte) ([]map[string]any, error) {
	dec := yaml.NewDecoder(strings.NewReader(string(data)))
	var docs []map[string]any
	for {
		var m map[string]any
		err := dec.Decode(&m)
		if errors.Is(err, io.EOF) {
			return docs, nil
		}
		if err != nil {
			return docs, err
		}
		docs = append(docs, m)
	}
}

// lookupPath navigates nested maps by keys.
func lookupPath(m map[string]any, keys ...string) (any, bool) {
	var cur any = m
	for _, k := range keys {
		mm, ok := cur.(map[string]any)
		if !ok {
			return nil, false
		}
		cur, ok = mm[k]
		if !ok {
			return nil, false
		}
	}
	return cur, true
}

func stringList(v any) ([]string, bool) {
	switch t := v.(type) {
	case []any:
		out := make([]string, 0, len(t))
		for _, x := range t {
			out = append(out, fmt.Sprint(x))
		}
		return out, true
	case string:
		var out []string
		for _, x := range strings.Split(strings.Trim(t, "{}"), ",") {
			if x = strings.TrimSpace(x); x != "" {
				out = append(out, x)
			}
		}
		return out, true
	}
	return nil, false
}
