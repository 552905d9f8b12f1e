package ui

import (
	"errors"
	"strings"
	"sync"
	"testing"
	"time"
)

// The sandbox's Kubernetes build shows above the keys while it runs: a
// line per binary on the first screen, one line on the others, its
// failure until the wizard ends, and nothing once it is built. The
// backend is read in commands, never in Update or View.
func TestBuildPanelFollowsTheBuild(t *testing.T) {
	g, b := guardedBackend(t)
	var mu sync.Mutex
	st := BuildStatus{
		Headline: "building the sandbox's Kubernetes control plane (first run; the wizard works meanwhile)",
		Programs: []string{"etcd v3.6.16: 80 of 582 packages, 16s of about 1m30s", "kube-apiserver v1.36.3: 55 of 2030 packages, 16s of about 6m"},
		Summary:  "building etcd 13%, kube-apiserver 2%; 16s of about 6m",
	}
	set := func(f func(*BuildStatus)) { mu.Lock(); f(&st); mu.Unlock() }
	b.Build = func() BuildStatus { g.io("Build"); mu.Lock(); defer mu.Unlock(); return st }
	h := newHarnessFor(t, g, b, Options{Width: 100, Height: 30})
	h.m.buildEvery = 5 * time.Millisecond

	view := func() string { return h.m.View() }
	h.WaitFor("the per-binary lines on the welcome screen", func() bool {
		return strings.Contains(view(), "⟳ building the sandbox's Kubernetes control plane") &&
			strings.Contains(view(), "kube-apiserver v1.36.3: 55 of 2030 packages, 16s of about 6m")
	})
	if got := len(strings.Split(view(), "\n")); got != 30 {
		t.Fatalf("the frame with the build panel has %d lines, want the terminal's 30", got)
	}

	h.Key("enter") // to the next screen: one line
	h.WaitFor("the one-line summary", func() bool {
		return strings.Contains(view(), "⟳ building etcd 13%, kube-apiserver 2%; 16s of about 6m") &&
			!strings.Contains(view(), "55 of 2030 packages")
	})

	set(func(s *BuildStatus) {
		s.Done, s.Err = true, errors.New("build kube-apiserver for the sandbox: exit status 1:\nno network to the Go module proxy")
	})
	h.WaitFor("the failure", func() bool {
		return strings.Contains(view(), "✗ build kube-apiserver for the sandbox: exit status 1:") &&
			strings.Contains(view(), "everything else works")
	})
	reads := g.count("Build")

	// Once over, the backend is no longer polled.
	h.Settle()
	if g.count("Build") != reads {
		t.Errorf("the build was read %d more times after it was over", g.count("Build")-reads)
	}

	h.m.build = BuildStatus{Done: true, Headline: "ready"}
	if strings.Contains(view(), "⟳") || strings.Contains(view(), "✗ build") {
		t.Errorf("a finished build still shows:\n%s", view())
	}
}
