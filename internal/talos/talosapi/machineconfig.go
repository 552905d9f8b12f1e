package talosapi

import (
	"context"
	"fmt"

	"github.com/cosi-project/runtime/pkg/safe"
	"github.com/siderolabs/talos/pkg/machinery/api/machine"
	"github.com/siderolabs/talos/pkg/machinery/config/encoder"
	configres "github.com/siderolabs/talos/pkg/machinery/resources/config"
)

// MachineConfig reads the config the node runs, as Talos reports it: the
// COSI MachineConfig resource "v1alpha1" (config.ActiveID) in the config
// namespace, encoded without comments. It needs the os:admin role (the
// resource is Sensitive).
func (c *Client) MachineConfig(ctx context.Context) ([]byte, error) {
	return c.machineConfig(ctx, configres.ActiveID, "read the machine config")
}

// PersistentConfig reads the config on the node's STATE partition (the
// MachineConfig resource "persistent"): ahead of MachineConfig after a
// staged apply, until the node reboots.
func (c *Client) PersistentConfig(ctx context.Context) ([]byte, error) {
	return c.machineConfig(ctx, configres.PersistentID, "read the persisted machine config")
}

func (c *Client) machineConfig(ctx context.Context, id string, op string) ([]byte, error) {
	mc, err := safe.StateGetByID[*configres.MachineConfig](ctx, c.c.COSI, id)
	if err != nil {
		return nil, c.wrap(op, err)
	}

	b, err := mc.Provider().EncodeBytes(encoder.WithComments(encoder.CommentsDisabled))
	if err != nil {
		return nil, fmt.Errorf("%s from %s: encode: %w", op, c.endpoint, err)
	}

	return b, nil
}

// NeedsReboot asks the node whether applying cfg needs a reboot: a dry
// run in AUTO mode, which Talos answers with the mode it would use
// (NO_REBOOT when the change applies live, REBOOT otherwise; machined's
// ApplyConfiguration, v1alpha1_server.go, with CanApplyImmediate). The
// reason is Talos' own message.
func (c *Client) NeedsReboot(ctx context.Context, cfg []byte) (bool, string, error) {
	resp, err := c.c.ApplyConfiguration(ctx, &machine.ApplyConfigurationRequest{
		Data:   cfg,
		Mode:   machine.ApplyConfigurationRequest_AUTO,
		DryRun: true,
	})
	if err != nil {
		return false, "", c.wrap("check the machine config (dry run)", err)
	}

	for _, m := range resp.GetMessages() {
		if m.GetMode() != machine.ApplyConfigurationRequest_NO_REBOOT {
			return true, m.GetModeDetails(), nil
		}
	}

	return false, "", nil
}

// ApplyConfigStaged stores cfg on the node's STATE partition; it takes
// effect at the next reboot (mode STAGED).
func (c *Client) ApplyConfigStaged(ctx context.Context, cfg []byte) error {
	return c.applyConfig(ctx, cfg, machine.ApplyConfigurationRequest_STAGED, "stage machine config")
}
