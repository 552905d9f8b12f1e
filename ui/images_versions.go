package ui

import (
	"cmp"
	"fmt"
	"regexp"
	"slices"
	"strconv"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/ohmytalos/ohmytalos/internal/factory"
	"github.com/ohmytalos/ohmytalos/internal/spec"
	"github.com/ohmytalos/ohmytalos/ui/common"
)

// The Talos version picker of the images screen: the factory's releases
// are loaded by versionsCmd when the screen opens, and the version key
// steps through the stable ones, newest first.

// stableRelease matches a stable Talos release tag such as v1.13.9: the
// factory's GET /versions also lists pre-releases (v1.14.0-alpha.1,
// v1.13.0-beta.0), which the picker leaves out.
var stableRelease = regexp.MustCompile(`^v(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)$`)

// stableVersions keeps the stable vX.Y.Z releases of list, without
// duplicates, newest first. The factory answers oldest first, but the
// order is not relied on.
func stableVersions(list []string) []string {
	type rel struct {
		tag string
		n   [3]int
	}
	var rels []rel
	for _, v := range list {
		m := stableRelease.FindStringSubmatch(v)
		if m == nil || slices.ContainsFunc(rels, func(r rel) bool { return r.tag == v }) {
			continue
		}
		r := rel{tag: v}
		ok := true
		for i := range r.n {
			n, err := strconv.Atoi(m[i+1])
			if err != nil { // only on overflow: such a tag is no real release
				ok = false
				break
			}
			r.n[i] = n
		}
		if ok {
			rels = append(rels, r)
		}
	}
	slices.SortFunc(rels, func(a, b rel) int {
		return cmp.Or(cmp.Compare(b.n[0], a.n[0]), cmp.Compare(b.n[1], a.n[1]), cmp.Compare(b.n[2], a.n[2]))
	})
	out := make([]string, len(rels))
	for i, r := range rels {
		out[i] = r.tag
	}
	return out
}

// nextVersion returns the release after current in versions (newest
// first), wrapping to the newest; the newest when current is not listed.
func nextVersion(versions []string, current string) string {
	i := slices.Index(versions, current)
	return versions[(i+1)%len(versions)]
}

// loadVersions starts loading the factory's releases, unless there is no
// version source or a load is in flight.
func (s *imagesScreen) loadVersions() tea.Cmd {
	if s.c.backend.Versions == nil || s.versionsLoading {
		return nil
	}
	s.versionsLoading = true
	s.versionsErr = ""
	return versionsCmd(s.c.ctx, s.c.backend)
}

// gotVersions takes the factory's answer. On failure the spec keeps its
// version and the screen shows why (the factory client's error names the
// factory URL and OHMYTALOS_FACTORY_URL).
func (s *imagesScreen) gotVersions(msg VersionsMsg) {
	s.versionsLoading = false
	if msg.Err != nil {
		s.versionsErr = msg.Err.Error()
		return
	}
	s.versions = stableVersions(msg.Versions)
	if len(s.versions) == 0 {
		s.versionsErr = "the image factory lists no stable Talos release (vX.Y.Z); check that " +
			factory.URLEnv + " points at an Image Factory"
	}
}

// pickVersion moves the spec to the next stable release, recomputes the
// schematics and reloads the official extensions for that release. With
// no list yet after a failure, it tries the factory again instead.
func (s *imagesScreen) pickVersion() tea.Cmd {
	if s.c.backend.Versions == nil || s.result == "running" {
		return nil
	}
	if len(s.versions) == 0 {
		if s.versionsErr != "" {
			return s.loadVersions()
		}
		return nil
	}
	v := nextVersion(s.versions, s.c.spec.Talos.Version)
	if v == s.c.spec.Talos.Version {
		return nil
	}
	s.c.editSpec(func(sp *spec.Spec) { sp.Talos.Version = v })
	s.recompute()
	if s.result == "ok" {
		s.result = "" // the snapshots built were for the previous release
	}
	s.exts, s.loadErr, s.cursor = nil, "", 0
	s.loading = true
	return extensionsCmd(s.c.ctx, s.c.backend, v)
}

// versionLine is the picker's state under the header: empty when the
// releases are listed, else loading or why they are not.
func (s *imagesScreen) versionLine() string {
	st := s.Styles
	switch {
	case s.c.backend.Versions == nil:
		return ""
	case s.versionsLoading:
		return st.Subtle.Render("loading the Talos releases…") + "\n"
	case s.versionsErr != "":
		return st.Warn.Render(common.Wrap(fmt.Sprintf("Talos releases unavailable, keeping %s (v tries again): %s", s.c.spec.Talos.Version, s.versionsErr), s.Width)) + "\n"
	}
	return ""
}
