package charts

import (
	"fmt"
	"net/url"
	"sort"
	"strings"
	"sync"
)

// MirrorUse tallies what one run took from a chart mirror (Source.Mirror):
// the charts fetched through it, those refused, and those ohmytalos pins
// no digest for. One MirrorUse is shared by every Source of a run; cmd
// prints its Summary on stderr when the run ends. Safe for concurrent use.
type MirrorUse struct {
	mu       sync.Mutex
	mirror   string
	standIns bool
	fetched  map[string]bool // describe(ref) of each chart fetched
	refused  map[string]bool
	unpinned map[string]string // describe(ref) -> warning
}

func (u *MirrorUse) record(s *Source, r Ref, err error, warning string) {
	if u == nil {
		return
	}
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.fetched == nil {
		u.fetched, u.refused, u.unpinned = map[string]bool{}, map[string]bool{}, map[string]string{}
	}
	u.mirror, u.standIns = redactURL(s.Mirror), s.StandIns
	key := describe(r)
	switch {
	case err != nil:
		u.refused[key] = true
	default:
		u.fetched[key] = true
	}
	if warning != "" {
		u.unpinned[key] = warning
	}
}

// Summary is the line that names the mirror and how many charts were
// fetched through it (and refused), and one warning per chart fetched
// through it that ohmytalos pins no digest for; "" and none when the run
// fetched nothing through a mirror.
func (u *MirrorUse) Summary() (line string, warnings []string) {
	if u == nil {
		return "", nil
	}
	u.mu.Lock()
	defer u.mu.Unlock()
	if len(u.fetched) == 0 && len(u.refused) == 0 {
		return "", nil
	}
	line = fmt.Sprintf("chart mirror %s: %s fetched through it", u.mirror, plural(len(u.fetched), "chart"))
	switch {
	case len(u.fetched) == 0:
	case u.standIns:
		line += " (the sandbox's stand-ins, checked against the mirror's own index)"
	case len(u.unpinned) == 0:
		line += ", each matching the digest ohmytalos pins"
	default:
		line += fmt.Sprintf(", %d of them with no pinned digest", len(u.unpinned))
	}
	if n := len(u.refused); n > 0 {
		line += fmt.Sprintf("; %d refused", n)
	}
	for _, w := range u.unpinned {
		warnings = append(warnings, w)
	}
	sort.Strings(warnings)
	return line, warnings
}

func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}

// redactURL is u without a password (url.URL.Redacted), for messages.
func redactURL(s string) string {
	u, err := url.Parse(s)
	if err != nil || u.User == nil {
		return strings.TrimSuffix(s, "/")
	}
	return strings.TrimSuffix(u.Redacted(), "/")
}

// throughMirror reports whether base (a repository URL after mirrored)
// is under the mirror.
func (s *Source) throughMirror(base string) bool {
	if s.Mirror == "" {
		return false
	}
	m := strings.TrimSuffix(s.Mirror, "/")
	return base == m || strings.HasPrefix(base, m+"/")
}
