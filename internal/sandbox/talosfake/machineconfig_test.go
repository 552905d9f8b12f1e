package talosfake_test

import (
	"strings"
	"testing"
	"time"

	"github.com/siderolabs/talos/pkg/machinery/api/machine"
	"github.com/siderolabs/talos/pkg/machinery/config"
	"github.com/siderolabs/talos/pkg/machinery/config/configpatcher"
	"github.com/siderolabs/talos/pkg/machinery/config/encoder"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// patched applies a strategic merge patch to a fixture config.
func patched(t *testing.T, cfg []byte, patch string) []byte {
	t.Helper()

	p, err := configpatcher.LoadPatch([]byte(patch))
	if err != nil {
		t.Fatal(err)
	}

	out, err := configpatcher.Apply(configpatcher.WithBytes(cfg), []configpatcher.Patch{p})
	if err != nil {
		t.Fatal(err)
	}

	c, err := out.Config()
	if err != nil {
		t.Fatal(err)
	}

	return encoded(t, c)
}

// encoded renders a machine config without comments.
func encoded(t *testing.T, c config.Provider) []byte {
	t.Helper()

	b, err := c.EncodeBytes(encoder.WithComments(encoder.CommentsDisabled))
	if err != nil {
		t.Fatal(err)
	}

	return b
}

func TestMachineConfigResourceFollowsApply(t *testing.T) {
	ctx, fx, e := parallelEnv(t, plainFixture)
	cp := e.start(131, fx.ControlPlane, nil)
	c := ready(t, ctx, fx.Talosconfig, cp)

	got, err := c.MachineConfig(ctx)
	if err != nil {
		t.Fatal(err)
	}

	if strings.Contains(string(got), "somaxconn") || !strings.Contains(string(got), "type: controlplane") {
		t.Fatalf("MachineConfig before any apply:\n%s", got)
	}

	// A sysctl applies live (machine.sysctls is in machined's immediate list).
	live := patched(t, fx.ControlPlane, `machine: {sysctls: {net.core.somaxconn: "65535"}}`)

	if reboot, why, err := c.NeedsReboot(ctx, live); err != nil || reboot {
		t.Fatalf("NeedsReboot(sysctl) = %v, %q, %v; want false", reboot, why, err)
	}

	if err := c.ApplyConfigNoReboot(ctx, live); err != nil {
		t.Fatal(err)
	}

	if got, err = c.MachineConfig(ctx); err != nil || !strings.Contains(string(got), "net.core.somaxconn: \"65535\"") {
		t.Fatalf("MachineConfig after a live apply = %v:\n%s", err, got)
	}

	// machine.env is not in machined's list: NO_REBOOT is refused, AUTO
	// answers that a reboot is needed, STAGED waits for the reboot.
	env := patched(t, live, `machine: {env: {HTTPS_PROXY: "http://proxy.example:3128"}}`)

	err = c.ApplyConfigNoReboot(ctx, env)
	if status.Code(err) != codes.InvalidArgument || !strings.Contains(err.Error(), "immediate mode") {
		t.Fatalf("NO_REBOOT of a machine.env change = %v, want InvalidArgument (can't be applied in immediate mode)", err)
	}

	if reboot, why, err := c.NeedsReboot(ctx, env); err != nil || !reboot || !strings.Contains(why, "machine.env") {
		t.Fatalf("NeedsReboot(env) = %v, %q, %v; want true naming machine.env", reboot, why, err)
	}

	if err := c.ApplyConfigStaged(ctx, env); err != nil {
		t.Fatal(err)
	}

	active, _ := c.MachineConfig(ctx)
	persistent, err := c.PersistentConfig(ctx)

	if err != nil || strings.Contains(string(active), "HTTPS_PROXY") || !strings.Contains(string(persistent), "HTTPS_PROXY") {
		t.Fatalf("after STAGED: active has the change = %v, persistent = %v (%v)", strings.Contains(string(active), "HTTPS_PROXY"), strings.Contains(string(persistent), "HTTPS_PROXY"), err)
	}

	if err := c.Reboot(ctx); err != nil {
		t.Fatal(err)
	}

	deadline := time.Now().Add(30 * time.Second)

	for {
		active, err = c.MachineConfig(ctx)
		if err == nil && strings.Contains(string(active), "HTTPS_PROXY") {
			break
		}

		if time.Now().After(deadline) {
			t.Fatalf("the staged config is not active 30s after the reboot (last: %v)", err)
		}

		time.Sleep(50 * time.Millisecond)
	}
}

func TestApplyRefusesInvalidConfig(t *testing.T) {
	ctx, fx, e := parallelEnv(t, plainFixture)
	cp := e.start(132, fx.ControlPlane, nil)

	_, err := rawDial(t, fx.Talosconfig, cp).ApplyConfiguration(ctx, &machine.ApplyConfigurationRequest{
		Data: patched(t, fx.ControlPlane, `machine: {nodeTaints: {a: "b:Wrong"}}`),
		Mode: machine.ApplyConfigurationRequest_AUTO,
	})
	if status.Code(err) != codes.InvalidArgument {
		t.Fatalf("apply of an invalid config = %v, want InvalidArgument", err)
	}
}
