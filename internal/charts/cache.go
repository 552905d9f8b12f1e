package charts

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// The cache holds archives by content: DIR/sha256/<hex>.tgz, mode 0600 in
// 0700 directories; those fetched through a chart mirror apart, in
// DIR/mirror/sha256/<hex>.tgz, so a mirror's archive never stands in for
// an upstream fetch. An entry is written to a temporary file and renamed
// into place, so concurrent fetches of the same chart (two runs, or two
// goroutines) each see either no entry or a whole one; both write the
// same bytes. Every read is hashed again: a corrupt entry is removed and
// the chart fetched anew.

// cachePath is where digest's archive lives under dir.
func cachePath(dir, digest string) string {
	return filepath.Join(dir, "sha256", strings.TrimPrefix(digest, "sha256:")+".tgz")
}

// cached returns digest's archive when the cache holds it intact.
func (s *Source) cached(dir, digest string) ([]byte, bool) {
	p := cachePath(dir, digest)

	data, err := os.ReadFile(p)
	if err != nil {
		return nil, false
	}

	if digestOf(data) != digest {
		s.progress("chart cache entry " + p + " is corrupt; fetching it again")
		_ = os.Remove(p)

		return nil, false
	}

	return data, true
}

// writeCache stores data (verified to be digest) in the cache.
func writeCache(dir, digest string, data []byte) error {
	p := cachePath(dir, digest)
	if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
		return fmt.Errorf("create chart cache %s: %w", filepath.Dir(p), err)
	}

	f, err := os.CreateTemp(filepath.Dir(p), ".tmp-*")
	if err != nil {
		return fmt.Errorf("write chart cache %s: %w", p, err)
	}

	tmp := f.Name()
	defer os.Remove(tmp)

	if _, err := f.Write(data); err != nil {
		f.Close()
		return fmt.Errorf("write chart cache %s: %w", p, err)
	}

	if err := f.Close(); err != nil {
		return fmt.Errorf("write chart cache %s: %w", p, err)
	}

	if err := os.Rename(tmp, p); err != nil {
		return fmt.Errorf("write chart cache %s: %w", p, err)
	}

	return nil
}

// fromCache parses r's pinned digest ("" when unpinned) and opens the
// cache folder (the mirror's when mirror); c is the cached chart when r
// is pinned, lookup is true and the cache holds that archive, nil
// otherwise.
func (s *Source) fromCache(r Ref, lookup, mirror bool) (pinned, cache string, c *Chart, err error) {
	if pinned, err = parseDigest(r.Digest); err != nil {
		return "", "", nil, err
	}
	if cache, err = s.cacheDir(); err != nil {
		return "", "", nil, err
	}
	if mirror {
		cache = filepath.Join(cache, "mirror")
	}
	if pinned != "" && lookup {
		if data, ok := s.cached(cache, pinned); ok {
			c, err = load(r, pinned, data)
		}
	}
	return pinned, cache, c, err
}
