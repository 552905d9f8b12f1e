package talosapi_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/ohmytalos/ohmytalos/internal/sandbox/talosfake"
)

func TestInstallRebootAndInstalled(t *testing.T) {
	t.Parallel()

	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()

	s := startSandbox(t, "eth1")
	cp := connect(t, s.fx.Talosconfig, s.cps[0])
	wk := connect(t, s.fx.Talosconfig, s.wk)

	if _, err := cp.BootstrapOnce(ctx); err != nil {
		t.Fatal(err)
	}

	got, err := wk.Installed(ctx)
	if err != nil || got.Version != talosfake.DefaultTalosVersion || got.Schematic != "" {
		t.Fatalf("Installed before = %+v, %v", got, err)
	}

	id := strings.Repeat("0f", 32)
	ref := "factory.talos.dev/hcloud-installer/" + id + ":v1.13.10"

	// A failing installer reports its exit code; nothing changes.
	s.tf.FailUpgrade(103)

	if err := wk.Install(ctx, ref, nil); err == nil || !strings.Contains(err.Error(), "exited with code 1") {
		t.Fatalf("failing install: %v", err)
	}

	s.tf.AllowUpgrade(103)

	var lines []string
	if err := wk.Install(ctx, ref, func(l string) { lines = append(lines, l) }); err != nil {
		t.Fatal(err)
	}

	if len(lines) == 0 {
		t.Error("no installer output")
	}

	// Installed, not running yet: the reboot boots it.
	if got, _ := wk.Installed(ctx); got.Version != talosfake.DefaultTalosVersion {
		t.Fatalf("running %+v before the reboot", got)
	}

	if err := wk.Reboot(ctx); err != nil {
		t.Fatal(err)
	}

	for {
		got, err := wk.Installed(ctx)
		if err == nil && got.Version == "v1.13.10" && got.Schematic == id {
			break
		}

		select {
		case <-ctx.Done():
			t.Fatalf("never came back at v1.13.10: %+v, %v", got, err)
		case <-time.After(50 * time.Millisecond):
		}
	}

	if err := wk.Install(ctx, "ghcr.io/example/installer:v1.13.10", nil); err == nil {
		t.Error("an installer outside the Image Factory was pulled")
	}
}
