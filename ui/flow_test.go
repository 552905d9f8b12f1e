package ui

import (
	"bytes"
	"testing"
	"time"

	"github.com/charmbracelet/x/exp/teatest"

	"github.com/ohmytalos/ohmytalos/internal/spec"
)

// TestFlowTeatest walks the whole wizard in a real bubbletea program:
// the real engine runs fake steps that emit realistic events, from the
// welcome screen to the done screen.
func TestFlowTeatest(t *testing.T) {
	_, b := guardedBackend(t)
	tm := teatest.NewTestModel(t, New(b, Options{Width: 120, Height: 40, NoColor: true}), teatest.WithInitialTermSize(120, 40))
	wait := func(what string) {
		t.Helper()
		teatest.WaitFor(t, tm.Output(), func(out []byte) bool { return bytes.Contains(out, []byte(what)) },
			teatest.WithDuration(5*time.Second), teatest.WithCheckInterval(5*time.Millisecond))
	}
	press := func(keys ...string) {
		for _, k := range keys {
			tm.Send(keyMsg(k))
		}
	}

	wait("enter to start a new cluster")
	press("enter")
	wait("Hetzner Cloud API token")
	press("enter")
	wait("token found and checked")
	press("enter")
	wait("siderolabs/qemu-guest-agent")
	press("enter")
	wait("Build 2 Talos snapshot(s)")
	press("y")
	wait("snapshots ready")
	press("enter")
	wait("Network layout")
	press("enter", "enter", "enter", "enter", "enter", "enter")
	wait("Node pools")
	press("down", "+")
	wait("3 × cpx32")
	press("enter")
	wait("3 to create")
	press("s")
	wait("Write the spec to ohmytalos.yaml?")
	press("y")
	wait("spec written")
	press("enter")
	wait("6 servers, then bootstraps")
	press("enter")
	wait("Start?")
	press("y")
	wait("cluster bootstrapped")
	press("enter")
	wait("Cluster demo is up")
	press("enter")

	fm := tm.FinalModel(t, teatest.WithFinalTimeout(5*time.Second)).(*Model)
	st := b.Env.State.Get()
	for _, s := range b.Engine.Steps() {
		if got := st.Step(string(s.Name())).Status; got != "done" {
			t.Errorf("step %s = %s at the end of the flow", s.Name(), got)
		}
	}
	if _, ok := st.Resources["server/demo-worker-3"]; !ok {
		t.Error("the third worker (added on the pools screen) was not created")
	}
	saved, err := spec.Load("ohmytalos.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if saved.Pools[0].Count != 3 || saved.Hash() != fm.c.spec.Hash() {
		t.Errorf("saved spec = %+v", saved.Pools)
	}
	if fm.active != scrDone {
		t.Errorf("final screen = %s", fm.active)
	}
}

// BenchmarkViewPools renders the pools screen with its cost panel at
// 120x40.
func BenchmarkViewPools(b *testing.B) {
	h, _ := newHarness(b, Options{Width: 120, Height: 40})
	h.Settle()
	h.Run(h.m.goTo(scrPools))
	h.Settle()
	if h.m.c.estimate == nil {
		b.Fatal("no estimate")
	}
	b.ReportAllocs()
	for b.Loop() {
		_ = h.m.View()
	}
}

// BenchmarkPoolCountKeystroke is one "+" on the pools screen: Update with
// the netplan check and the cost estimate, then View.
func BenchmarkPoolCountKeystroke(b *testing.B) {
	h, _ := newHarness(b, Options{Width: 120, Height: 40})
	h.Settle()
	h.Run(h.m.goTo(scrPools))
	h.Settle()
	plus, minus := keyMsg("+"), keyMsg("-")
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		k := plus
		if i%2 == 1 {
			k = minus
		}
		i++
		h.m.Update(k)
		_ = h.m.View()
	}
}
