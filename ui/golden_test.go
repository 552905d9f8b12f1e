package ui

import (
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/charmbracelet/x/exp/golden"

	"github.com/ohmytalos/ohmytalos/internal/engine"
	"github.com/ohmytalos/ohmytalos/steps"
)

// goldenSizes are the terminal sizes every screen is checked at.
func goldenSizes() [][2]int { return [][2]int{{80, 24}, {120, 40}} }

// t0 is the fixed time of synthetic events.
func t0() time.Time { return time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC) }

// screenSetups bring a fresh model to each screen, in a state worth
// seeing, without the clock or the terminal.
func screenSetups() map[string]func(h *harness) {
	return map[string]func(h *harness){
		"welcome": func(h *harness) {},
		"secrets": func(h *harness) {
			h.Key("enter")
			h.Settle()
			h.Key("enter") // look up the token: runs the secrets step
			h.WaitFor("token checked", func() bool { return h.m.screens[scrSecrets].(*secretsScreen).result == "ok" })
			h.Settle()
		},
		"images": func(h *harness) {
			h.Run(h.m.goTo(scrImages))
			h.Settle()
			h.Key("down", "space") // add iscsi-tools to the control plane
			img := h.m.screens[scrImages].(*imagesScreen)
			img.runID, img.result = 99, "running"
			for _, ev := range []engine.Event{
				{Step: "images", Kind: engine.KindStarted, Time: t0()},
				{Step: "images", Kind: engine.KindProgress, Resource: "image/controlPlane-amd64", Message: "writing image", Fraction: 0.5, Bytes: 150 << 20, Total: 300 << 20, Time: t0()},
				{Step: "images", Kind: engine.KindResource, Resource: "image/worker-amd64", Action: "create", Message: "snapshot 4711", Time: t0()},
			} {
				h.Send(RunEventMsg{RunID: 99, Event: ev})
			}
		},
		"network": func(h *harness) {
			h.Run(h.m.goTo(scrNetwork))
			h.Settle()
			// Make the pods range collide with the network: a finding shows.
			h.Key("tab")
			for range 12 {
				h.Key("backspace")
			}
			h.typeText("10.0.0.0/16")
		},
		"pools": func(h *harness) {
			h.Run(h.m.goTo(scrPools))
			h.Settle()
			h.Key("a", "+")
		},
		"review": func(h *harness) {
			h.Run(h.m.goTo(scrReview))
			h.Settle()
		},
		"bootstrap": func(h *harness) {
			h.m.c.savedHash = h.m.c.spec.Hash()
			h.Run(h.m.goTo(scrBootstrap))
			bs := h.m.screens[scrBootstrap].(*bootstrapScreen)
			bs.runID, bs.result = 98, "running"
			evs := []engine.Event{
				{Step: "network", Kind: engine.KindStarted, Time: t0()},
				{Step: "network", Kind: engine.KindResource, Resource: "network/demo", Action: "create", Time: t0()},
				{Step: "network", Kind: engine.KindDone, Elapsed: 1500 * time.Millisecond, Time: t0().Add(1500 * time.Millisecond)},
				{Step: "servers", Kind: engine.KindStarted, Time: t0().Add(2 * time.Second)},
				{Step: "servers", Kind: engine.KindResource, Resource: "server/demo-cp-1", Action: "create", Time: t0().Add(3 * time.Second)},
				{Step: "servers", Kind: engine.KindProgress, Resource: "server/demo-cp-2", Message: "booting", Fraction: 0.4, Time: t0().Add(4 * time.Second)},
				{Step: "servers", Kind: engine.KindWarning, Message: "cpx22 is scarce in nbg1; retrying in 10s", Time: t0().Add(5 * time.Second)},
				{Step: "servers", Kind: engine.KindLog, Message: "waiting for Talos API on 127.0.0.11:50000", Time: t0().Add(65 * time.Second)},
			}
			for _, ev := range evs {
				h.Send(RunEventMsg{RunID: 98, Event: ev})
			}
		},
		"bootstrap_addons": func(h *harness) {
			h.m.c.savedHash = h.m.c.spec.Hash()
			h.Run(h.m.goTo(scrBootstrap))
			bs := h.m.screens[scrBootstrap].(*bootstrapScreen)
			bs.runID, bs.result = 97, "running"
			for _, ev := range addonsWaitEvents() {
				h.Send(RunEventMsg{RunID: 97, Event: ev})
			}
			h.Send(TickMsg(t0().Add(5 * time.Second)))
		},
		"done_missing": func(h *harness) {
			for _, s := range deploySteps() {
				h.m.c.status[s] = engine.StepStatus{Name: s, Status: "done"}
			}
			h.m.c.status[steps.StepAddons] = engine.StepStatus{Name: steps.StepAddons, Status: engine.StatusFailed}
			for _, ev := range append(addonsWaitEvents(), addonsTimeout()) {
				h.Send(RunEventMsg{RunID: 97, Event: ev})
			}
			h.Run(h.m.goTo(scrDone))
		},
		"done": func(h *harness) {
			for _, s := range deploySteps() {
				h.m.c.status[s] = engine.StepStatus{Name: s, Status: "done"}
			}
			h.Run(h.m.goTo(scrDone))
		},
	}
}

// TestGolden renders every screen at 80x24 and 120x40 without colour and
// compares with testdata/TestGolden/*.golden (go test -update rewrites them).
func TestGolden(t *testing.T) {
	for name, setup := range screenSetups() {
		for _, size := range goldenSizes() {
			t.Run(fmt.Sprintf("%s_%dx%d", name, size[0], size[1]), func(t *testing.T) {
				orig, err := os.Getwd()
				if err != nil {
					t.Fatal(err)
				}
				h, _ := newHarness(t, Options{Width: size[0], Height: size[1]})
				h.Settle()
				setup(h)
				out := h.m.View()
				checkSize(t, out, size[0], size[1])
				t.Chdir(orig) // golden files live in this package's testdata
				golden.RequireEqual(t, []byte(out))
			})
		}
	}
}
