package charts

import (
	"bytes"
	"fmt"
	"os"

	"helm.sh/helm/v4/pkg/chart/v2/loader"
)

// loadLocal loads r.Path: a chart directory, or a .tgz whose digest is
// recorded. The path is the operator's own chart (a mirror's copy, or a
// patched one) and nothing is cached; a Ref.Digest set with it (the
// operator's, addons.ChartRef drops the pin for a path) is checked like
// any other: the .tgz must have it, and a directory, which has no
// archive digest, is refused.
func loadLocal(r Ref) (*Chart, error) {
	pinned, err := parseDigest(r.Digest)
	if err != nil {
		return nil, err
	}

	fi, err := os.Stat(r.Path)
	if err != nil {
		return nil, &reason{what: fmt.Sprintf("path %s cannot be read (%v)", r.Path, err), fix: "set CHART.path to a chart directory (with Chart.yaml) or a .tgz", err: err}
	}

	if fi.IsDir() && pinned != "" {
		return nil, &reason{
			what: fmt.Sprintf("%s is a chart directory, which has no archive digest to check against %s", r.Path, pinned),
			fix:  "point CHART.path at the chart's .tgz (helm package, helm pull), or drop CHART.digest",
		}
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

	if got := digestOf(data); pinned != "" && got != pinned {
		return nil, &reason{
			what: fmt.Sprintf("digest mismatch: %s is %s, pinned %s", r.Path, got, pinned),
			fix:  "set CHART.path to the archive the digest names, or CHART.digest to the archive's sha256 once you have checked it",
		}
	}

	c, err := loader.LoadArchive(bytes.NewReader(data))
	if err != nil {
		return nil, &reason{what: fmt.Sprintf("%s is not a chart archive (%v)", r.Path, err), fix: "set CHART.path to a .tgz made by `helm package` or `helm pull`", err: err}
	}

	return &Chart{Ref: r, Digest: digestOf(data), Chart: c}, nil
}
