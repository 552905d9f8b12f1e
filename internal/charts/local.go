package charts

import (
	"bytes"
	"fmt"
	"os"

	"helm.sh/helm/v4/pkg/chart/v2/loader"
)

// loadLocal loads r.Path: a chart directory, or a .tgz whose digest is
// recorded. A pinned Ref.Digest is not compared: the path is the
// operator's own chart (a mirror's copy, or a patched one), and nothing
// is cached.
func loadLocal(r Ref) (*Chart, error) {
	fi, err := os.Stat(r.Path)
	if err != nil {
		return nil, &reason{what: fmt.Sprintf("path %s cannot be read (%v)", r.Path, err), fix: "set CHART.path to a chart directory (with Chart.yaml) or a .tgz", err: err}
	}

	if fi.IsDir() {
		c, err := loader.LoadDir(r.Path)
		if err != nil {
			return nil, &reason{what: fmt.Sprintf("%s is not a chart directory (%v)", r.Path, err), fix: "point CHART.path at the directory holding Chart.yaml", err: err}
		}

		return &Chart{Ref: r, Chart: c}, nil
	}

	data, err := os.ReadFile(r.Path)
	if err != nil {
		return nil, &reason{what: fmt.Sprintf("path %s cannot be read (%v)", r.Path, err), fix: "check CHART.path", err: err}
	}

	c, err := loader.LoadArchive(bytes.NewReader(data))
	if err != nil {
		return nil, &reason{what: fmt.Sprintf("%s is not a chart archive (%v)", r.Path, err), fix: "set CHART.path to a .tgz made by `helm package` or `helm pull`", err: err}
	}

	return &Chart{Ref: r, Digest: digestOf(data), Chart: c}, nil
}
