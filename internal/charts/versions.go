package charts

import (
	"slices"
	"sort"
	"strings"

	"github.com/Masterminds/semver/v3"
	repo "helm.sh/helm/v4/pkg/repo/v1"
)

// nearest lists up to n of the versions closest to want: those sharing
// the longest prefix of major.minor.patch, newest first.
func nearest(versions repo.ChartVersions, want string, n int) []string {
	w, werr := semver.NewVersion(want)

	type cand struct {
		v     string
		sv    *semver.Version
		score int
	}

	var cs []cand
	for _, cv := range versions {
		if cv == nil || cv.Metadata == nil {
			continue
		}

		sv, err := semver.NewVersion(cv.Version)
		if err != nil {
			continue
		}

		score := 0
		if werr == nil {
			switch {
			case sv.Major() == w.Major() && sv.Minor() == w.Minor():
				score = 2
			case sv.Major() == w.Major():
				score = 1
			}
		}

		cs = append(cs, cand{cv.Version, sv, score})
	}

	sort.SliceStable(cs, func(i, j int) bool {
		if cs[i].score != cs[j].score {
			return cs[i].score > cs[j].score
		}

		return cs[i].sv.GreaterThan(cs[j].sv)
	})

	out := make([]string, 0, n)
	for _, c := range cs {
		if len(out) == n {
			break
		}

		out = append(out, c.v)
	}

	if len(out) == 0 {
		return []string{"none"}
	}

	return out
}

// names lists an index's chart names, sorted, at most ten.
func names(entries map[string]repo.ChartVersions) string {
	ns := make([]string, 0, len(entries))
	for n := range entries {
		ns = append(ns, n)
	}

	slices.Sort(ns)

	if len(ns) > 10 {
		ns = append(ns[:10], "...")
	}

	if len(ns) == 0 {
		return "no charts"
	}

	return strings.Join(ns, ", ")
}
