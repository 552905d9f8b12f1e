package ui

import (
	"context"
	"errors"
	"os"
	"strings"
	"testing"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/ohmytalos/ohmytalos/internal/engine"
	"github.com/ohmytalos/ohmytalos/internal/factory"
	"github.com/ohmytalos/ohmytalos/internal/pricing"
	"github.com/ohmytalos/ohmytalos/internal/spec"
	"github.com/ohmytalos/ohmytalos/steps"
)

// open brings the harness to a screen and settles.
func (h *harness) open(id screenID) {
	h.t.Helper()
	h.Settle()
	h.Run(h.m.goTo(id))
	h.Settle()
	if h.m.active != id {
		h.t.Fatalf("screen %s did not open (active: %s)", id, h.m.active)
	}
}

func mustContain(t *testing.T, view string, want ...string) {
	t.Helper()
	for _, w := range want {
		if !strings.Contains(view, w) {
			t.Errorf("view lacks %q:\n%s", w, view)
		}
	}
}

func TestNetworkFindingsOnEveryKeystroke(t *testing.T) {
	h, _ := newHarness(t, Options{Width: 80, Height: 24})
	h.open(scrNetwork)
	if n := len(h.m.c.findings); n != 0 {
		t.Fatalf("default layout has findings: %v", h.m.c.findings)
	}
	h.Key("tab") // pods
	for range len("10.42.0.0/16") {
		h.Key("backspace")
	}
	if len(h.m.c.findingsFor("network.pods")) == 0 {
		t.Error("an empty pod range has no finding")
	}
	h.typeText("10.0.0.0/16")
	mustContain(t, h.m.View(), "✗ the pod range 10.0.0.0/16 overlaps")
	// Fix it one keystroke at a time: the finding goes away at the end.
	for range len("0.0.0/16") {
		h.Key("backspace")
	}
	h.typeText("42.0.0/16")
	if fs := h.m.c.findingsFor("network.pods"); len(fs) != 0 {
		t.Errorf("findings after fixing the pods range: %v", fs)
	}
	if h.m.c.spec.Network.Pods != "10.42.0.0/16" {
		t.Errorf("spec pods = %q", h.m.c.spec.Network.Pods)
	}
	// A VIP outside the control-plane subnet is flagged beside its field.
	h.Key("tab", "tab", "tab")
	h.Key("backspace", "backspace", "backspace")
	h.typeText("0")
	h.Key("backspace")
	for range len("10.0.1.") {
		h.Key("backspace")
	}
	h.typeText("10.0.9.5")
	if len(h.m.c.findingsFor("controlPlane.vip")) == 0 {
		t.Errorf("VIP 10.0.9.5 outside 10.0.1.0/24 has no finding; spec VIP %q", h.m.c.spec.ControlPlane.VIP)
	}
	// enter on the last field refuses to continue with errors.
	h.Key("tab", "enter")
	h.Settle()
	if h.m.active != scrNetwork {
		t.Error("the wizard moved on with network errors")
	}
	mustContain(t, h.m.View(), "problem(s) left")
}

func TestSecretsRunsOnlySecretsStep(t *testing.T) {
	h, _ := newHarness(t, Options{Width: 80, Height: 24})
	h.Key("enter") // welcome -> secrets
	h.Settle()
	if h.m.active != scrSecrets {
		t.Fatalf("active = %s, want secrets", h.m.active)
	}
	h.Key("enter")
	h.WaitFor("secrets result", func() bool { return h.m.screens[scrSecrets].(*secretsScreen).result == "ok" })
	h.Settle()
	if h.g.count("apply secrets") != 1 || h.g.count("apply images") != 0 || h.g.count("apply network") != 0 {
		t.Errorf("calls = %v, want only the secrets step", h.g.calls)
	}
	view := h.m.View()
	mustContain(t, view, "token found and checked", "env:HCLOUD_TOKEN = ••••", "API 3598 left (fake)", "✓ welcome")
	// The sidebar's secrets status comes from the state.
	if got := h.m.c.stepStatus("secrets"); got != "done" {
		t.Errorf("secrets status = %s", got)
	}
	// Changing the provider asks for a new check; enter continues only
	// after it.
	h.Key("right")
	if h.m.c.spec.Secrets.HCloudToken.Provider != "bw" {
		t.Errorf("provider = %s, want bw", h.m.c.spec.Secrets.HCloudToken.Provider)
	}
	if strings.Contains(h.m.View(), "token found and checked") {
		t.Error("the old check result is still shown after changing the reference")
	}
}

func TestImagesSchematicIDsAndConfirm(t *testing.T) {
	h, _ := newHarness(t, Options{Width: 120, Height: 40})
	h.open(scrImages)
	img := h.m.screens[scrImages].(*imagesScreen)
	want, _ := factory.New([]string{"siderolabs/tailscale"}, nil).ID()
	if img.ids["controlPlane"] != want {
		t.Fatalf("control plane ID = %s, want %s", img.ids["controlPlane"], want)
	}
	mustContain(t, h.m.View(), want, "siderolabs/qemu-guest-agent", "QEMU guest agent")
	h.Key("down", "space") // qemu-guest-agent after tailscale
	want2, _ := factory.New([]string{"siderolabs/tailscale", "siderolabs/qemu-guest-agent"}, nil).ID()
	if img.ids["controlPlane"] != want2 || !strings.Contains(h.m.View(), want2) {
		t.Errorf("ID after toggling = %s, want %s", img.ids["controlPlane"], want2)
	}
	h.Key("space") // and off again
	if img.ids["controlPlane"] != want {
		t.Errorf("ID after toggling back = %s", img.ids["controlPlane"])
	}

	h.Key("enter")
	mustContain(t, h.m.View(), "Build 2 Talos snapshot(s)", "controlPlane-amd64, worker-amd64")
	h.Key("n")
	h.Settle()
	if h.g.count("apply images") != 0 {
		t.Fatal("images were built without confirmation")
	}
	h.Key("enter", "y")
	h.WaitFor("images built", func() bool { return img.result == "ok" })
	h.Settle()
	if h.g.count("apply images") != 1 || h.g.count("apply secrets") != 0 {
		t.Errorf("calls = %v, want only the images step", h.g.calls)
	}
	mustContain(t, h.m.View(), "snapshots ready", "image/worker-amd64")
}

func TestReviewWritesSpecOnConfirm(t *testing.T) {
	h, _ := newHarness(t, Options{Width: 80, Height: 24})
	h.open(scrPools)
	h.Key("down", "+")
	h.open(scrReview)
	mustContain(t, h.m.View(), "images     2 to create")
	// Bootstrap is gated until the spec is written.
	h.Key("ctrl+n")
	h.Settle()
	if h.m.active != scrReview {
		t.Fatal("bootstrap opened before the spec was saved")
	}
	mustContain(t, h.m.View(), "bootstrap: save the spec")
	h.Key("s")
	mustContain(t, h.m.View(), "Write the spec to ohmytalos.yaml?")
	h.Key("y")
	h.Settle()
	mustContain(t, h.m.View(), "spec written to ohmytalos.yaml")
	got, err := spec.Load("ohmytalos.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if got.Pools[0].Count != 3 || got.Hash() != h.m.c.spec.Hash() {
		t.Errorf("written spec differs from the edited one: %+v", got.Pools)
	}
	h.Key("enter")
	h.Settle()
	if h.m.active != scrBootstrap {
		t.Errorf("active = %s after enter on a saved review, want bootstrap", h.m.active)
	}
	// Editing after saving makes the file stale again.
	h.open(scrPools)
	h.Key("+")
	if h.m.c.isSaved() {
		t.Error("the spec counts as saved after an edit")
	}
}

func TestBootstrapFailureAndResume(t *testing.T) {
	h, fs := newHarness(t, Options{Width: 120, Height: 40})
	fs[5].failOnce.Store(true) // servers
	h.m.c.savedHash = h.m.c.spec.Hash()
	h.open(scrBootstrap)
	bs := h.m.screens[scrBootstrap].(*bootstrapScreen)
	h.Key("enter")
	mustContain(t, h.m.View(), "Create 5 servers", "in the sandbox")
	h.Key("y")
	h.WaitFor("failure", func() bool { return bs.result == "failed" })
	h.Settle()
	view := h.m.View()
	mustContain(t, view, "not orderable in nbg1", "✓ network", "✗ servers")
	if got := h.m.sidebarStatus(scrBootstrap); got != statusCurrent || h.m.deployStatus() != statusFailed {
		t.Errorf("sidebar bootstrap = %s, deploy = %s; want current and failed", got, h.m.deployStatus())
	}
	if h.m.c.stepStatus("servers") != "failed" {
		t.Errorf("servers status = %s", h.m.c.stepStatus("servers"))
	}
	h.Key("r")
	mustContain(t, h.m.View(), "Resume creating")
	h.Key("y")
	h.WaitFor("success", func() bool { return bs.result == "ok" })
	h.Settle()
	if n := h.g.count("apply network"); n != 1 {
		t.Errorf("network applied %d times, want 1 (done steps are skipped on resume)", n)
	}
	st := h.m.c.backend.Env.State.Get()
	if len(st.Resources) == 0 {
		t.Fatal("no resources in the state")
	}
	for _, s := range deploySteps() {
		if st.Step(string(s)).Status != "done" {
			t.Errorf("step %s = %s after resume", s, st.Step(string(s)).Status)
		}
	}
	mustContain(t, h.m.View(), "cluster bootstrapped", "etcd is healthy")
	h.Key("enter")
	h.Settle()
	if h.m.active != scrDone {
		t.Errorf("active = %s, want done", h.m.active)
	}
	mustContain(t, h.m.View(), "ohmytalos kubeconfig --sandbox --out kubeconfig")
}

func TestResumeOpensFirstUnfinishedStep(t *testing.T) {
	g, b := guardedBackend(t)
	for _, step := range []engine.StepName{steps.StepSecrets, steps.StepImages} {
		if err := b.Engine.Run(context.Background(), b.Env, engine.Options{Only: step}, nil); err != nil {
			t.Fatal(err)
		}
	}
	// The operator edits the spec afterwards: steps done with the older
	// spec still count as done in the wizard (apply decides on reruns).
	b.Env.Spec.Pools[0].Count = 5
	h := newHarnessFor(t, g, b, Options{Width: 80, Height: 24})
	h.Settle()
	if h.m.active != scrNetwork {
		t.Fatalf("resumed at %s, want network", h.m.active)
	}
	mustContain(t, h.m.View(), "✓ secrets", "✓ images", "✓ welcome", "▶ network")

	// The welcome screen tells what is done and what is left.
	h.open(scrWelcome)
	mustContain(t, h.m.View(), "Resume: what is done", "secrets", "Look up the Hetzner token: done", "Create servers: pending")
}

func TestQuitDuringRunWaitsForCheckpoint(t *testing.T) {
	h, _ := newHarness(t, Options{Width: 80, Height: 24})
	h.open(scrSecrets)
	h.Key("enter")
	if h.m.running == nil {
		t.Fatal("no run started")
	}
	h.Send(keyMsg("ctrl+c"))
	if !h.m.stopping {
		t.Fatal("ctrl+c during a run did not start stopping")
	}
	h.WaitFor("quit", h.Quit)
	if h.m.running != nil {
		t.Error("the wizard quit before the engine returned")
	}
	if st := h.m.c.backend.Env.State.Get().Step("secrets").Status; st == "running" {
		t.Errorf("secrets left %q in the state", st)
	}
}

func TestResizeAndHelp(t *testing.T) {
	h, _ := newHarness(t, Options{Width: 80, Height: 24})
	h.open(scrPools)
	for _, size := range [][2]int{{200, 60}, {80, 24}, {100, 30}} {
		h.Send(tea.WindowSizeMsg{Width: size[0], Height: size[1]})
		checkSize(t, h.m.View(), size[0], size[1])
	}
	h.Send(tea.WindowSizeMsg{Width: 200, Height: 60})
	mustContain(t, h.m.View(), "3 × cpx22 server") // detail rows at large sizes
	h.Key("?")
	mustContain(t, h.m.View(), "log: .ohmytalos/ohmytalos.log", "previous step", "volume +10 GB")
	checkSize(t, h.m.View(), 200, 60)
	h.Send(tea.WindowSizeMsg{Width: 40, Height: 10})
	mustContain(t, h.m.View(), "at least 80x24")
}

func TestNoBackendIOBeforeCommandsRun(t *testing.T) {
	g, b := guardedBackend(t)
	m := New(b, Options{Width: 80, Height: 24, NoColor: true})
	_ = m.View()
	for _, k := range []string{"enter", "tab", "x", "+", "ctrl+n", "ctrl+n", "enter"} {
		m, _ = m.Update(keyMsg(k))
		_ = m.View()
	}
	if len(g.calls) != 0 {
		t.Errorf("backend called without running a command: %v", g.calls)
	}
}

func TestCatalogErrorShown(t *testing.T) {
	g, b := guardedBackend(t)
	b.Catalog = func(context.Context) (*pricing.Catalog, error) {
		return nil, errors.New("GET /pricing: 401 unauthorized; check the token")
	}
	h := newHarnessFor(t, g, b, Options{Width: 80, Height: 24})
	h.open(scrPools)
	mustContain(t, h.m.View(), "prices unavailable", "GET /pricing: 401")
	h.Key("t")
	mustContain(t, h.m.View(), "prices are not loaded yet")
}

func TestRunNeedsTerminal(t *testing.T) {
	_, b := guardedBackend(t)
	// go test runs with stdin and stdout that are not terminals.
	if fi, err := os.Stdout.Stat(); err == nil && fi.Mode()&os.ModeCharDevice != 0 {
		t.Skip("stdout is a terminal here")
	}
	if err := Run(context.Background(), b, Options{}); !errors.Is(err, ErrNoTTY) {
		t.Fatalf("Run = %v, want ErrNoTTY", err)
	}
	if ErrNoTTY.Error() != "init needs a terminal; use plan/apply in scripts" {
		t.Errorf("ErrNoTTY = %q", ErrNoTTY)
	}
}

func TestReviewBlocksSaveWithProblems(t *testing.T) {
	h, _ := newHarness(t, Options{Width: 120, Height: 40})
	h.m.c.spec.Network.Pods = "10.0.0.0/16" // collides with every subnet
	h.open(scrReview)
	view := h.m.View()
	if n := strings.Count(view, "network.pods: the pod range 10.0.0.0/16 overlaps the subnet of pool control plane"); n != 1 {
		t.Errorf("the pods problem is shown %d times, want once:\n%s", n, view)
	}
	h.Key("s")
	h.Settle()
	mustContain(t, h.m.View(), "fix them on the earlier screens first")
	if _, err := os.Stat("ohmytalos.yaml"); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a spec with problems was written (stat: %v)", err)
	}
}

func TestImagesWithoutExtensionList(t *testing.T) {
	g, b := guardedBackend(t)
	b.Extensions = func(context.Context, string) ([]factory.Extension, error) {
		return nil, errors.New("factory https://factory.talos.dev is unreachable; set OHMYTALOS_FACTORY_URL")
	}
	h := newHarnessFor(t, g, b, Options{Width: 120, Height: 40})
	h.open(scrImages)
	mustContain(t, h.m.View(), "extensions unavailable: factory https://factory.talos.dev is unreachable", "[x] siderolabs/tailscale")
	// The schematic's own extensions stay editable.
	h.Key("space")
	if n := len(h.m.c.spec.Schematics.ControlPlane.Extensions); n != 0 {
		t.Errorf("control plane extensions = %d after toggling tailscale off", n)
	}
	mustContain(t, h.m.View(), "[ ] siderolabs/tailscale")
	empty, _ := factory.New(nil, nil).ID()
	if empty != factory.EmptySchematicID || !strings.Contains(h.m.View(), empty) {
		t.Errorf("the empty schematic's ID %s is not shown", empty)
	}
}

func TestRealModeHasNoSandboxLabels(t *testing.T) {
	g, b := guardedBackend(t)
	b.Sandbox = false
	h := newHarnessFor(t, g, b, Options{Width: 120, Height: 40})
	h.Settle()
	view := h.m.View()
	mustContain(t, view, "61.96 EUR/month net")
	for _, bad := range []string{"SANDBOX", "fake", "if real"} {
		if strings.Contains(view, bad) {
			t.Errorf("real mode shows %q:\n%s", bad, view)
		}
	}
	h.m.c.savedHash = h.m.c.spec.Hash()
	h.open(scrBootstrap)
	h.Key("enter")
	mustContain(t, h.m.View(), "on Hetzner Cloud", "billed by the hour")
}
