package doctorui

import (
	"fmt"
	"testing"

	"github.com/charmbracelet/x/exp/golden"
	"github.com/muesli/termenv"
)

// goldenSizes are the terminal sizes every frame is checked at.
func goldenSizes() [][2]int { return [][2]int{{80, 24}, {120, 40}} }

// frames bring a fresh screen to a state worth seeing.
func frames() map[string]struct {
	block []string
	setup func(h *harness)
} {
	type frame = struct {
		block []string
		setup func(h *harness)
	}
	return map[string]frame{
		"running": {block: []string{"vip-claimed", "mtu"}, setup: func(h *harness) {
			h.WaitFor("10 results", func() bool { return h.doneCount() == 10 })
		}},
		"done": {setup: func(h *harness) {
			h.idle()
			h.selectRow("lb-targets")
		}},
		"detail_fail": {setup: func(h *harness) {
			h.idle()
			h.selectRow("lb-targets")
			h.Key("enter")
		}},
		"detail_skip": {setup: func(h *harness) {
			h.idle()
			h.selectRow("provider-id")
			h.Key("enter")
		}},
		"detail_running": {block: []string{"mtu"}, setup: func(h *harness) {
			h.WaitFor("11 results", func() bool { return h.doneCount() == 11 })
			h.selectRow("mtu")
			h.Key("enter")
		}},
	}
}

// TestGolden renders every frame at 80x24 and 120x40 without colour and
// compares with testdata/TestGolden/*.golden (go test -update rewrites them).
func TestGolden(t *testing.T) {
	for name, fr := range frames() {
		for _, size := range goldenSizes() {
			t.Run(fmt.Sprintf("%s_%dx%d", name, size[0], size[1]), func(t *testing.T) {
				f := newFakeRun(t, fr.block...)
				h := newHarness(t, f, Options{Width: size[0], Height: size[1], Sandbox: true,
					Notes: []string{"Kubernetes checks skip: no kubeconfig yet"}})
				fr.setup(h)
				out := h.m.View()
				checkSize(t, out, size[0], size[1])
				golden.RequireEqual(t, []byte(out))
			})
		}
	}
}

// TestGoldenColour pins the colours: the finished list in the 256-colour
// profile, escape sequences written out.
func TestGoldenColour(t *testing.T) {
	f := newFakeRun(t)
	h := newHarnessProfile(t, f, Options{Width: 80, Height: 24, Sandbox: true}, termenv.ANSI256)
	h.idle()
	out := h.m.View()
	checkSize(t, out, 80, 24)
	golden.RequireEqualEscape(t, []byte(out), true)
}
