package ui

import (
	"context"
	"net"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/ohmytalos/ohmytalos/internal/factory"
)

func TestStableVersions(t *testing.T) {
	got := stableVersions([]string{
		"v1.9.5", "v1.10.0-alpha.0", "v1.10.0", "v1.10.0", "1.11.0", "v1.11", "v1.10.12",
		"v1.2.3-beta.1", "v01.2.3", "v2.0.0", "latest", "", "v1.10.1+build",
	})
	want := []string{"v2.0.0", "v1.10.12", "v1.10.0", "v1.9.5"}
	if !slices.Equal(got, want) {
		t.Errorf("stableVersions = %v, want %v", got, want)
	}
	if got := stableVersions([]string{"v1.14.0-alpha.1"}); len(got) != 0 {
		t.Errorf("pre-releases only: %v, want none", got)
	}
	vs := []string{"v1.13.9", "v1.13.0", "v1.12.6"}
	for cur, next := range map[string]string{"v1.13.9": "v1.13.0", "v1.13.0": "v1.12.6", "v1.12.6": "v1.13.9", "v1.14.0-alpha.1": "v1.13.9"} {
		if got := nextVersion(vs, cur); got != next {
			t.Errorf("nextVersion(%s) = %s, want %s", cur, got, next)
		}
	}
}

// versionedExtensions is a factory whose extension list depends on the
// version, recording the versions asked for.
type versionedExtensions struct {
	g     *guard
	mu    sync.Mutex
	asked []string
}

func (f *versionedExtensions) list(_ context.Context, v string) ([]factory.Extension, error) {
	f.g.io("extensions")
	f.mu.Lock()
	f.asked = append(f.asked, v)
	f.mu.Unlock()
	return append(testExtensions(), factory.Extension{Name: "siderolabs/only-" + v, Description: "built for " + v}), nil
}

func (f *versionedExtensions) versions() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.asked)
}

func TestImagesPickTalosVersion(t *testing.T) {
	g, b := guardedBackend(t)
	fx := &versionedExtensions{g: g}
	b.Extensions = fx.list
	h := newHarnessFor(t, g, b, Options{Width: 120, Height: 40})
	h.open(scrImages)
	img := h.m.screens[scrImages].(*imagesScreen)
	if g.count("versions") != 1 {
		t.Errorf("versions listed %d times on opening the screen, want once", g.count("versions"))
	}
	mustContain(t, h.m.View(), "Talos v1.13.9, one snapshot", "v version", "siderolabs/only-v1.13.9")
	if !slices.Equal(img.versions, []string{"v1.13.9", "v1.13.0", "v1.12.6"}) {
		t.Errorf("picker offers %v, want the stable releases newest first", img.versions)
	}
	idsBefore := img.ids["controlPlane"]

	h.Key("v")
	if v := h.m.c.spec.Talos.Version; v != "v1.13.0" {
		t.Fatalf("spec version after v = %s, want v1.13.0", v)
	}
	mustContain(t, h.m.View(), "Talos v1.13.0, one snapshot", "loading the official extensions…")
	if strings.Contains(h.m.View(), "siderolabs/only-v1.13.9") {
		t.Errorf("the extensions of v1.13.9 are still offered while v1.13.0's load")
	}
	// A late answer for the version picked away from is ignored.
	h.Send(ExtensionsMsg{Version: "v1.13.9", Extensions: []factory.Extension{{Name: "siderolabs/stale"}}})
	if img.exts != nil || !img.loading {
		t.Errorf("a stale extension list was applied: %v", img.exts)
	}
	h.Settle()
	mustContain(t, h.m.View(), "siderolabs/only-v1.13.0  built for v1.13.0", "[x] siderolabs/tailscale")
	if img.ids["controlPlane"] != idsBefore || idsBefore == "" {
		t.Errorf("control plane ID %q changed to %q: a schematic ID does not depend on the version", idsBefore, img.ids["controlPlane"])
	}

	h.Key("v")
	h.Settle()
	h.Key("v") // wraps to the newest
	h.Settle()
	if v := h.m.c.spec.Talos.Version; v != "v1.13.9" {
		t.Errorf("spec version after wrapping = %s, want v1.13.9", v)
	}
	want := []string{"v1.13.9", "v1.13.0", "v1.12.6", "v1.13.9"}
	if got := fx.versions(); !slices.Equal(got, want) {
		t.Errorf("extensions loaded for %v, want %v", got, want)
	}
	if g.count("versions") != 1 {
		t.Errorf("versions listed %d times, want once", g.count("versions"))
	}
}

// refusedURL is a loopback URL nothing listens on.
func refusedURL(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	url := "http://" + ln.Addr().String()
	if err := ln.Close(); err != nil {
		t.Fatal(err)
	}
	return url
}

func TestImagesVersionsUnreachableFactory(t *testing.T) {
	g, b := guardedBackend(t)
	url := refusedURL(t)
	fc := factory.NewClient(url, nil)
	b.Versions = func(ctx context.Context) ([]string, error) {
		g.io("versions")
		return fc.Versions(ctx)
	}
	h := newHarnessFor(t, g, b, Options{Width: 120, Height: 40})
	h.open(scrImages)
	img := h.m.screens[scrImages].(*imagesScreen)
	flat := strings.Join(strings.Fields(img.view()), " ")
	for _, w := range []string{
		"Talos releases unavailable, keeping v1.13.9 (v tries again)",
		"the image factory at " + url + " is unreachable",
		"set " + factory.URLEnv + " to a reachable Image Factory",
	} {
		if !strings.Contains(flat, w) {
			t.Errorf("images screen lacks %q:\n%s", w, img.view())
		}
	}
	// The extensions still load, and v keeps the version but tries again.
	mustContain(t, h.m.View(), "[x] siderolabs/tailscale")
	h.Key("v")
	h.Settle()
	if v := h.m.c.spec.Talos.Version; v != "v1.13.9" {
		t.Errorf("spec version = %s after a failed listing, want v1.13.9 kept", v)
	}
	if n := g.count("versions"); n != 2 {
		t.Errorf("versions listed %d times, want 2 (v retries)", n)
	}
	mustContain(t, img.view(), "Talos releases unavailable, keeping v1.13.9")
}

func TestImagesWithoutVersionSource(t *testing.T) {
	g, b := guardedBackend(t)
	b.Versions = nil
	h := newHarnessFor(t, g, b, Options{Width: 120, Height: 40})
	h.open(scrImages)
	h.Key("v")
	h.Settle()
	if v := h.m.c.spec.Talos.Version; v != "v1.13.9" {
		t.Errorf("spec version = %s with no version source, want v1.13.9", v)
	}
	if view := h.m.View(); strings.Contains(view, "v version") || strings.Contains(view, "Talos releases") {
		t.Errorf("the picker shows without a version source:\n%s", view)
	}
}
