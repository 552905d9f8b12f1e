package ui

import (
	"bytes"
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/charmbracelet/x/exp/teatest"

	"github.com/ohmytalos/ohmytalos/internal/engine"
	"github.com/ohmytalos/ohmytalos/internal/factory"
	"github.com/ohmytalos/ohmytalos/internal/pricing"
	"github.com/ohmytalos/ohmytalos/internal/sandbox"
	"github.com/ohmytalos/ohmytalos/internal/spec"
	"github.com/ohmytalos/ohmytalos/internal/state"
	"github.com/ohmytalos/ohmytalos/steps"
)

// TestFlowAgainstSandbox walks the wizard in a real bubbletea program with
// the real steps against the in-process sandbox: real Hetzner API calls,
// image builds over SSH, Talos bootstrap over mTLS.
func TestFlowAgainstSandbox(t *testing.T) {
	if testing.Short() {
		t.Skip("full sandboxed flow: skipped with -short")
	}
	dir := t.TempDir()
	t.Chdir(dir)
	t.Setenv("OHMYTALOS_AGE_KEY_FILE", filepath.Join(dir, "age.key"))
	sb, err := sandbox.Start(context.Background(), sandbox.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer sb.Close()
	d := steps.SandboxDeps(steps.SandboxEndpoints{
		HCloudURL: sb.HCloudURL, FactoryURL: sb.FactoryURL, IPEchoURL: sb.IPEchoURL,
		Token: sb.Token, RescueSSHPort: sb.RescueSSHPort, ChartsURL: sb.ChartsURL,
	}, nil, "test")
	d.PollInterval = 20 * time.Millisecond
	keys, err := state.LoadKeyring(state.KeyFileCandidates(), state.DefaultNewKeyFile())
	if err != nil {
		t.Fatal(err)
	}
	st, err := state.Open(filepath.Join(".ohmytalos", "demo"), "demo", keys)
	if err != nil {
		t.Fatal(err)
	}
	fc := factory.NewClient(d.FactoryURL, d.HTTP)
	b := Backend{
		Engine: engine.New(steps.All(d)...), Env: &engine.Env{Spec: spec.Default("demo"), State: st},
		SpecPath: "ohmytalos.yaml", Sandbox: true, Redact: d.Redact,
		Catalog: func(ctx context.Context) (*pricing.Catalog, error) {
			c, err := d.HCloud(ctx, spec.Default("demo"))
			if err != nil {
				return nil, err
			}
			return pricing.FromAPI(ctx, c)
		},
		Extensions: func(ctx context.Context, v string) ([]factory.Extension, error) { return fc.OfficialExtensions(ctx, v) },
		Versions:   fc.Versions,
	}
	tm := teatest.NewTestModel(t, New(b, Options{Width: 120, Height: 40, NoColor: true}), teatest.WithInitialTermSize(120, 40))
	wait := func(what string, d time.Duration) {
		t.Helper()
		teatest.WaitFor(t, tm.Output(), func(out []byte) bool { return bytes.Contains(out, []byte(what)) },
			teatest.WithDuration(d), teatest.WithCheckInterval(20*time.Millisecond))
	}
	press := func(keys ...string) {
		for _, k := range keys {
			tm.Send(keyMsg(k))
		}
	}
	wait("enter to start a new cluster", 10*time.Second)
	press("enter")
	wait("Hetzner Cloud API token", 5*time.Second)
	press("enter")
	wait("token found and checked", 20*time.Second)
	press("enter")
	wait("siderolabs/tailscale", 10*time.Second)
	press("enter")
	wait("Build 2 Talos snapshot(s)", 5*time.Second)
	press("y")
	wait("snapshots ready", 60*time.Second)
	press("enter")
	wait("Network layout", 5*time.Second)
	press("enter", "enter", "enter", "enter", "enter", "enter")
	wait("Node pools", 5*time.Second)
	press("down", "+")
	wait("3 × cpx32", 5*time.Second)
	press("enter")
	wait("3 to create", 20*time.Second)
	press("s")
	wait("Write the spec to ohmytalos.yaml?", 5*time.Second)
	press("y")
	wait("spec written", 5*time.Second)
	press("enter")
	wait("6 servers, then bootstraps", 5*time.Second)
	press("enter")
	wait("Start?", 5*time.Second)
	press("y")
	wait("cluster bootstrapped", 120*time.Second)
	press("enter")
	wait("Cluster demo is up", 5*time.Second)
	press("enter")
	tm.FinalModel(t, teatest.WithFinalTimeout(10*time.Second))

	got := sb.HCloud.Counts()
	if got["servers"] != 6 || got["images"] != 2 || got["load_balancers"] != 1 || got["ssh_keys"] != 0 {
		t.Errorf("sandbox holds %v", got)
	}
	if n := sb.Talos.Bootstraps("demo"); n != 1 {
		t.Errorf("bootstrapped %d times", n)
	}
	if !st.HasSecret("kubeconfig") {
		t.Error("no kubeconfig stored")
	}
}
