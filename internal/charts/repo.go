package charts

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"

	"helm.sh/helm/v4/pkg/chart/v2/loader"
	repo "helm.sh/helm/v4/pkg/repo/v1"
	"sigs.k8s.io/yaml"
)

// Size limits: an index or archive larger than these is refused rather
// than read into memory (Longhorn's chart is ~100 KiB, its index ~1 MiB,
// cilium's index ~5 MiB).
const (
	maxIndex   = 64 << 20
	maxArchive = 64 << 20
)

// fetchHTTP fetches r from its Helm HTTP repository (or the mirror of
// it), or from the cache; a fetch through the mirror is tallied in Use.
func (s *Source) fetchHTTP(ctx context.Context, addon string, r Ref) (*Chart, error) {
	base := s.mirrored(r.Repository)
	via := s.throughMirror(base)

	c, warning, err := s.fetchHTTPFrom(ctx, addon, r, base, via)
	if via {
		s.Use.record(s, r, err, warning)
	}

	return c, err
}

// fetchHTTPFrom is fetchHTTP from base; warning is set for a chart
// fetched through the mirror that has no pinned digest.
func (s *Source) fetchHTTPFrom(ctx context.Context, addon string, r Ref, base string, via bool) (*Chart, string, error) {
	// A pinned chart already in the cache needs no network at all (a
	// mirror's chart is asked of the mirror each time).
	pinned, cache, c, err := s.fromCache(r, !via, via)
	if err != nil || c != nil {
		return c, "", err
	}

	cv, err := s.lookup(ctx, base, r)
	if err != nil {
		return nil, "", err
	}

	want, err := s.indexDigest(cv, pinned, via)
	if err != nil {
		return nil, "", err
	}

	warning := ""
	if via && !s.StandIns && pinned == "" {
		warning = s.unpinnedWarning(addon, r)
	}

	if data, ok := s.cached(cache, want); ok {
		c, err := load(r, want, data)
		return c, warning, err
	}

	data, err := s.download(ctx, base, cv, want, via && !s.StandIns && pinned != "")
	if err != nil {
		return nil, "", err
	}

	if err := writeCache(cache, want, data); err != nil {
		return nil, "", err
	}

	c, err = load(r, want, data)

	return c, warning, err
}

// indexDigest is the digest the archive must have. From a repository:
// the index's, which a pinned digest must equal. Through the mirror: the
// pinned one, which the mirror's index must not contradict; the mirror
// index's only for a chart with no pinned digest, or for the sandbox's
// stand-ins (StandIns), whose digests are not upstream's.
func (s *Source) indexDigest(cv *repo.ChartVersion, pinned string, via bool) (string, error) {
	listed := ""
	if cv.Digest != "" {
		var err error
		if listed, err = parseDigest("sha256:" + strings.TrimPrefix(cv.Digest, "sha256:")); err != nil {
			return "", &reason{what: "the repository's index lists a malformed digest " + cv.Digest, fix: "check the repository, or pin CHART.digest and use CHART.path"}
		}
	}

	switch {
	case via && (s.StandIns || pinned == "") && listed == "":
		return "", &reason{what: "the chart mirror's index lists no digest for the chart", fix: "regenerate the mirror's index.yaml with `helm repo index`"}
	case via && s.StandIns:
		return listed, nil
	case via && pinned != "" && listed != "" && listed != pinned:
		return "", &reason{
			what: fmt.Sprintf("digest mismatch: the chart mirror %s lists %s, pinned %s", redactURL(s.Mirror), listed, pinned),
			fix:  mirrorFix,
		}
	case via && pinned != "":
		return pinned, nil
	case via:
		return listed, nil
	case pinned != "" && listed != "" && listed != pinned:
		return "", &reason{
			what: fmt.Sprintf("digest mismatch: pinned %s, the repository's index lists %s", pinned, listed),
			fix:  "if the chart was republished upstream, check it and set CHART.digest to the new digest; otherwise the repository (or a proxy) serves a different chart",
		}
	case listed != "":
		return listed, nil
	case pinned != "":
		return pinned, nil
	}

	return "", &reason{what: "the repository's index lists no digest, so the archive cannot be verified", fix: "pin CHART.digest (sha256:<hex> of the .tgz)"}
}

// mirrorFix is the fix for a mirror that serves another archive than the
// pinned one.
const mirrorFix = "a chart mirror must serve the upstream archive itself: refresh the mirror's copy of the chart and its index.yaml, or unset OHMYTALOS_CHART_MIRROR to fetch the chart from its repository"

// unpinnedWarning is the warning for r, fetched through the mirror with no
// pinned digest, for add-on addon (its spec key).
func (s *Source) unpinnedWarning(addon string, r Ref) string {
	field := "the chart's digest"
	if addon != "" {
		field = "addons." + addon + ".chart.digest"
	}

	return fmt.Sprintf("warning: no pinned digest for %s: fetched through the chart mirror %s and checked only against the mirror's own index; set %s to the upstream archive's sha256 to pin it",
		describe(r), redactURL(s.Mirror), field)
}

// mirrored rewrites an http(s) repository URL under Source.Mirror.
func (s *Source) mirrored(repository string) string {
	repository = strings.TrimSuffix(repository, "/")
	if s.Mirror == "" {
		return repository
	}

	rest, ok := strings.CutPrefix(repository, "https://")
	if !ok {
		rest, ok = strings.CutPrefix(repository, "http://")
	}

	mirror := strings.TrimSuffix(s.Mirror, "/")
	if !ok || strings.HasPrefix(repository, mirror) {
		return repository
	}

	return mirror + "/" + rest
}

// lookup downloads base's index and finds r's exact version in it.
func (s *Source) lookup(ctx context.Context, base string, r Ref) (*repo.ChartVersion, error) {
	raw, err := s.get(ctx, base+"/index.yaml", maxIndex)
	if err != nil {
		return nil, &reason{
			what: fmt.Sprintf("repository %s is unreachable (%v)", base, err),
			fix:  "check the network or the URL, or set CHART.repository to a reachable mirror, or CHART.path to a local chart directory or .tgz",
			err:  err,
		}
	}

	var idx repo.IndexFile
	if err := yaml.Unmarshal(raw, &idx); err != nil {
		return nil, &reason{what: fmt.Sprintf("%s/index.yaml is not a Helm repository index (%v)", base, err), fix: "check CHART.repository", err: err}
	}

	versions, ok := idx.Entries[r.Name]
	if !ok || len(versions) == 0 {
		return nil, &reason{what: fmt.Sprintf("repository %s has no chart %q (it has %s)", base, r.Name, names(idx.Entries)), fix: "check CHART.name"}
	}

	for _, cv := range versions {
		if cv != nil && cv.Metadata != nil && cv.Version == r.Version {
			return cv, nil
		}
	}

	return nil, &reason{
		what: fmt.Sprintf("version %s is not in %s/index.yaml (nearest: %s)", r.Version, base, strings.Join(nearest(versions, r.Version, 5), ", ")),
		fix:  "set CHART.version to one the repository lists",
	}
}

// download fetches cv's archive and verifies it against want: the pinned
// digest of a chart fetched through the mirror when pinnedMirror.
func (s *Source) download(ctx context.Context, base string, cv *repo.ChartVersion, want string, pinnedMirror bool) ([]byte, error) {
	if len(cv.URLs) == 0 {
		return nil, &reason{what: "the repository's index lists no URL for the chart", fix: "check the repository, or set CHART.path"}
	}

	u, err := s.archiveURL(base, cv.URLs[0])
	if err != nil {
		return nil, &reason{what: fmt.Sprintf("archive URL %q is invalid (%v)", cv.URLs[0], err), fix: "check the repository, or set CHART.path", err: err}
	}

	s.progress("downloading chart " + cv.Name + " " + cv.Version + " from " + u)

	data, err := s.get(ctx, u, maxArchive)
	if err != nil {
		return nil, &reason{
			what: fmt.Sprintf("archive %s cannot be downloaded (%v)", u, err),
			fix:  "check the network, or set CHART.repository to a reachable mirror, or CHART.path to a local .tgz",
			err:  err,
		}
	}

	got := digestOf(data)
	switch {
	case got == want:
		return data, nil
	case pinnedMirror:
		return nil, &reason{
			what: fmt.Sprintf("digest mismatch: the chart mirror %s serves %s (%s), pinned %s", redactURL(s.Mirror), got, redactURL(u), want),
			fix:  mirrorFix,
		}
	}

	return nil, &reason{
		what: fmt.Sprintf("digest mismatch: the archive from %s is %s, the index lists %s", u, got, want),
		fix:  "the repository or a proxy serves a different archive than its index lists; retry later, or set CHART.path to a verified copy",
	}
}

// archiveURL resolves an index's archive URL against the repository, as
// helm does (repo.ResolveReferenceURL), and keeps it under the mirror.
func (s *Source) archiveURL(base, ref string) (string, error) {
	b, err := url.Parse(base + "/")
	if err != nil {
		return "", err
	}

	rel, err := url.Parse(ref)
	if err != nil {
		return "", err
	}

	return s.mirrored(b.ResolveReference(rel).String()), nil
}

// get reads url's body, at most limit bytes.
func (s *Source) get(ctx context.Context, u string, limit int64) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, err
	}

	resp, err := s.client().Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()

	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET %s: %s", u, resp.Status)
	}

	data, err := io.ReadAll(io.LimitReader(resp.Body, limit+1))
	if err != nil {
		return nil, err
	}

	if int64(len(data)) > limit {
		return nil, fmt.Errorf("GET %s: larger than %d MiB", u, limit>>20)
	}

	return data, nil
}

// load loads an archive verified to have digest.
func load(r Ref, digest string, data []byte) (*Chart, error) {
	c, err := loader.LoadArchive(bytes.NewReader(data))
	if err != nil {
		return nil, &reason{what: fmt.Sprintf("the archive %s is not a valid chart (%v)", digest, err), fix: "check CHART", err: err}
	}

	return &Chart{Ref: r, Digest: digest, Chart: c}, nil
}

// digestOf is "sha256:<hex>" of data.
func digestOf(data []byte) string {
	sum := sha256.Sum256(data)

	return "sha256:" + hex.EncodeToString(sum[:])
}

// parseDigest checks a "sha256:<hex>" digest ("" stays "").
func parseDigest(d string) (string, error) {
	if d == "" {
		return "", nil
	}

	h, ok := strings.CutPrefix(d, "sha256:")
	if b, err := hex.DecodeString(h); !ok || err != nil || len(b) != sha256.Size {
		return "", &reason{what: fmt.Sprintf("digest %q is not sha256:<64 hex digits>", d), fix: "set CHART.digest as sha256:<hex> (the index's digest field)"}
	}

	return "sha256:" + strings.ToLower(h), nil
}
