package chartrepo

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io/fs"
	"time"

	"helm.sh/helm/v4/pkg/chart/v2/loader"
	"sigs.k8s.io/yaml"

	chart "helm.sh/helm/v4/pkg/chart/v2"
)

// epoch is every archive entry's and index entry's time, so that the
// archives (and their digests) and the indexes are the same on every run.
var epoch = time.Date(2026, time.January, 1, 0, 0, 0, 0, time.UTC)

// pack archives charts/NAME as `helm package` lays a chart out (NAME/ at
// the root of a gzipped tar), with entries in lexical order and fixed
// times, then loads it back with helm's loader: a chart helm would refuse
// fails here, at sandbox start.
func pack(name string) (Chart, error) {
	var buf bytes.Buffer
	gz, err := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	if err != nil {
		return Chart{}, err
	}
	gz.ModTime = epoch
	tw := tar.NewWriter(gz)
	root := "charts/" + name
	err = fs.WalkDir(charts, root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		body, err := fs.ReadFile(charts, p)
		if err != nil {
			return err
		}
		h := &tar.Header{Name: name + p[len(root):], Mode: 0o644, Size: int64(len(body)), ModTime: epoch, Typeflag: tar.TypeReg, Format: tar.FormatPAX}
		if err := tw.WriteHeader(h); err != nil {
			return err
		}
		_, err = tw.Write(body)
		return err
	})
	if err == nil {
		err = tw.Close()
	}
	if err == nil {
		err = gz.Close()
	}
	if err != nil {
		return Chart{}, fmt.Errorf("package stand-in chart %s: %w", name, err)
	}
	c, err := loader.LoadArchive(bytes.NewReader(buf.Bytes()))
	if err != nil {
		return Chart{}, fmt.Errorf("stand-in chart %s does not load: %w", name, err)
	}
	if c.Name() != name {
		return Chart{}, fmt.Errorf("stand-in chart in charts/%s is named %q", name, c.Name())
	}
	sum := sha256.Sum256(buf.Bytes())
	return Chart{
		Name: name, Version: c.Metadata.Version, File: fmt.Sprintf("%s-%s.tgz", name, c.Metadata.Version),
		Digest: hex.EncodeToString(sum[:]), Archive: buf.Bytes(), meta: c.Metadata,
	}, nil
}

// indexFile is a Helm repository index (helm.sh/helm/v4/pkg/repo/v1
// IndexFile and ChartVersion, the fields a static repository writes):
// written here rather than with that package, which would bring helm's
// OCI and getter stack into every binary holding the sandbox.
type indexFile struct {
	APIVersion string                    `json:"apiVersion"`
	Entries    map[string][]chartVersion `json:"entries"`
	Generated  time.Time                 `json:"generated"`
}

type chartVersion struct {
	*chart.Metadata
	Created time.Time `json:"created"`
	Digest  string    `json:"digest"`
	URLs    []string  `json:"urls"`
}

// index lists a repository's charts. The URLs are relative to the index,
// as `helm repo index` writes them without --url: helm resolves them
// against the repository URL, so the mirror works at any base.
func index(cs []Chart) ([]byte, error) {
	idx := indexFile{APIVersion: "v1", Entries: map[string][]chartVersion{}, Generated: epoch}
	for _, c := range cs {
		idx.Entries[c.Name] = append(idx.Entries[c.Name], chartVersion{Metadata: c.meta, Created: epoch, Digest: c.Digest, URLs: []string{c.File}})
	}
	return yaml.Marshal(idx)
}
