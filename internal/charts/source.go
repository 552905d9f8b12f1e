package charts

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	chart "helm.sh/helm/v4/pkg/chart/v2"
)

// Source fetches charts: from a Helm HTTP repository (its index.yaml and
// archives), an OCI registry, or a local path, and caches archives by
// digest. A digest set in a Ref (pinned) is checked wherever the chart
// comes from: the repository, its mirror, a registry or a local .tgz.
type Source struct {
	// CacheDir holds the archives by digest; "" is
	// os.UserCacheDir()/ohmytalos/charts.
	CacheDir string
	// HTTP fetches indexes and archives; nil is a client with timeouts.
	HTTP *http.Client
	// Mirror, when set (OHMYTALOS_CHART_MIRROR), rewrites every
	// https://HOST/PATH repository to Mirror+"/HOST/PATH". A mirror is
	// only another place to fetch the same archives from: an archive
	// fetched through it must have the pinned Ref.Digest (refused
	// otherwise, naming the mirror and both digests); a chart with no
	// pinned digest is checked against the mirror's index and reported
	// (Use). Its archives are cached apart, under CacheDir/mirror.
	Mirror string
	// StandIns says the mirror serves the sandbox's stand-in charts (set
	// only when the Hetzner API is the sandbox's): their digests are not
	// upstream's, so the mirror index's digest is enforced in place of
	// the pinned one.
	StandIns bool
	// Use, when set, tallies the charts fetched through Mirror.
	Use *MirrorUse
	// Progress, when set, receives one line per download.
	Progress func(string)
}

// Chart is a fetched, verified and loaded chart.
type Chart struct {
	// Ref is what was asked for.
	Ref Ref
	// Digest is "sha256:<hex>" of the archive; "" for a chart directory.
	Digest string
	// Chart is the loaded chart.
	Chart *chart.Chart
}

// httpTimeout bounds one index or archive download when Source.HTTP is nil.
const httpTimeout = 2 * time.Minute

// Fetch fetches, verifies and loads the chart r names. Errors name the
// chart, the reason and the fix; FetchFor names the add-on as well.
func (s *Source) Fetch(ctx context.Context, r Ref) (*Chart, error) {
	return s.FetchFor(ctx, "", r)
}

// FetchFor is Fetch for the add-on addon (its spec key, e.g. "cilium"):
// errors point at addons.ADDON.chart.
func (s *Source) FetchFor(ctx context.Context, addon string, r Ref) (*Chart, error) {
	c, err := s.fetch(ctx, addon, r)
	if err != nil {
		return nil, &FetchError{Addon: addon, Ref: r, Err: err}
	}

	return c, nil
}

func (s *Source) fetch(ctx context.Context, addon string, r Ref) (*Chart, error) {
	switch {
	case r.Path != "":
		return loadLocal(r)
	case strings.HasPrefix(r.Repository, "oci://"):
		if r.Name == "" || r.Version == "" {
			return nil, &reason{what: "chart name or version is empty", fix: "set CHART.name and CHART.version as the registry tags them"}
		}

		return s.fetchOCI(ctx, r)
	case r.Repository == "":
		return nil, &reason{what: "no repository and no path", fix: "set CHART.repository (an https:// Helm repository) or CHART.path"}
	case r.Name == "" || r.Version == "":
		return nil, &reason{what: "chart name or version is empty", fix: "set CHART.name and CHART.version as the repository's index.yaml lists them"}
	}

	return s.fetchHTTP(ctx, addon, r)
}

// cacheDir is the cache's root, created private.
func (s *Source) cacheDir() (string, error) {
	dir := s.CacheDir
	if dir == "" {
		base, err := os.UserCacheDir()
		if err != nil {
			return "", fmt.Errorf("find the user cache directory (%w): set XDG_CACHE_HOME or HOME", err)
		}

		dir = filepath.Join(base, "ohmytalos", "charts")
	}

	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", fmt.Errorf("create chart cache %s: %w", dir, err)
	}

	return dir, nil
}

func (s *Source) client() *http.Client {
	if s.HTTP != nil {
		return s.HTTP
	}

	return &http.Client{Timeout: httpTimeout}
}

func (s *Source) progress(msg string) {
	if s.Progress != nil {
		s.Progress(msg)
	}
}

// FetchError is a chart that could not be fetched: it names the add-on,
// the chart, the reason and the fix.
type FetchError struct {
	Addon string
	Ref   Ref
	Err   error
}

// Error implements error.
func (e *FetchError) Error() string {
	who := "chart " + describe(e.Ref)
	field := "the add-on's chart"
	if e.Addon != "" {
		who = "add-on " + e.Addon + ": " + who
		field = "addons." + e.Addon + ".chart"
	}

	var r *reason
	if errors.As(e.Err, &r) {
		return who + ": " + r.what + ": " + chartWord.ReplaceAllLiteralString(r.fix, field)
	}

	return who + ": " + e.Err.Error()
}

// Unwrap returns the cause.
func (e *FetchError) Unwrap() error { return e.Err }

// describe names a chart ref for an operator.
func describe(r Ref) string {
	if r.Path != "" {
		return r.Path
	}

	s := r.Name
	if r.Version != "" {
		s += " " + r.Version
	}

	if r.Repository != "" {
		s += " from " + r.Repository
	}

	return s
}

// chartWord is "CHART" as a word (not OHMYTALOS_CHART_MIRROR's).
var chartWord = regexp.MustCompile(`\bCHART\b`)

// reason is a failure with its fix; "CHART" in fix is replaced by the
// add-on's chart field.
type reason struct {
	what string
	fix  string
	err  error
}

func (r *reason) Error() string { return r.what + ": " + r.fix }

func (r *reason) Unwrap() error { return r.err }
