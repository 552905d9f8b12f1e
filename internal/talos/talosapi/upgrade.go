package talosapi

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/cosi-project/runtime/pkg/safe"
	"github.com/cosi-project/runtime/pkg/state"
	"github.com/siderolabs/talos/pkg/machinery/api/common"
	"github.com/siderolabs/talos/pkg/machinery/api/machine"
	"github.com/siderolabs/talos/pkg/machinery/resources/runtime"
)

// schematicExtension is the ExtensionStatus ID under which Talos reports
// the Image Factory schematic it was installed from: the factory adds a
// pseudo-extension named "schematic" whose version is the schematic ID
// (siderolabs/talos internal/app/machined/pkg/controllers/runtime/
// image_factory_schematic.go reads exactly that).
const schematicExtension = "schematic"

// Installed is the Talos release and Image Factory schematic a node runs.
type Installed struct {
	Version   string
	Schematic string // "" when the image came from no schematic
}

// Installed reads the Talos version (Version API) and the schematic (the
// "schematic" extension status) the node runs now.
func (c *Client) Installed(ctx context.Context) (Installed, error) {
	v, err := c.Version(ctx)
	if err != nil {
		return Installed{}, err
	}
	ext, err := safe.StateGetByID[*runtime.ExtensionStatus](ctx, c.c.COSI, schematicExtension)
	switch {
	case err != nil && state.IsNotFoundError(err):
		return Installed{Version: v}, nil
	case err != nil:
		return Installed{}, c.wrap("read the installed schematic", err)
	}
	return Installed{Version: v, Schematic: ext.TypedSpec().Metadata.Version}, nil
}

// Install installs the Talos of an installer image onto the system disk,
// the Talos 1.13 way (talosctl upgrade): ImageService.Pull puts the
// installer in the system containerd, LifecycleService.Upgrade runs it and
// streams its output and exit code. The new system boots at the next
// Reboot: in 1.13 the client drains the node and reboots it itself.
// MachineService.Upgrade, the older single call that also rebooted, is
// deprecated in the 1.13 client (machinery client/client.go: "Deprecated:
// use LifecycleClient instead"). progress receives the installer's lines.
func (c *Client) Install(ctx context.Context, image string, progress func(string)) error {
	ctr := &common.ContainerdInstance{Driver: common.ContainerDriver_CONTAINERD, Namespace: common.ContainerdNamespace_NS_SYSTEM}
	pull, err := c.c.ImageClient.Pull(ctx, &machine.ImageServicePullRequest{Containerd: ctr, ImageRef: image})
	if err != nil {
		return c.wrap("pull installer "+image, err)
	}
	for {
		_, err := pull.Recv()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return c.wrap("pull installer "+image, err)
		}
	}
	up, err := c.c.LifecycleClient.Upgrade(ctx, &machine.LifecycleServiceUpgradeRequest{
		Containerd: ctr, Source: &machine.InstallArtifactsSource{ImageName: image},
	})
	if err != nil {
		return c.wrap("upgrade to "+image, err)
	}
	var last string
	for {
		msg, err := up.Recv()
		if errors.Is(err, io.EOF) {
			return fmt.Errorf("upgrade to %s at %s: the installer ended without an exit code (last output: %q)", image, c.endpoint, last)
		}
		if err != nil {
			return c.wrap("upgrade to "+image, err)
		}
		p := msg.GetProgress()
		if code, ok := p.GetResponse().(*machine.LifecycleServiceInstallProgress_ExitCode); ok {
			if code.ExitCode != 0 {
				return fmt.Errorf("upgrade to %s at %s: the installer exited with code %d: %s", image, c.endpoint, code.ExitCode, last)
			}
			return nil
		}
		last = p.Fmt()
		if progress != nil {
			progress(last)
		}
	}
}

// Reboot reboots the node (into what Install wrote).
func (c *Client) Reboot(ctx context.Context) error {
	if err := c.c.Reboot(ctx); err != nil {
		return c.wrap("reboot", err)
	}
	return nil
}

// ApplyConfigNoReboot applies a machine config that Talos must apply
// live; Talos refuses it (InvalidArgument) when the change needs a reboot.
func (c *Client) ApplyConfigNoReboot(ctx context.Context, cfg []byte) error {
	return c.applyConfig(ctx, cfg, machine.ApplyConfigurationRequest_NO_REBOOT, "apply machine config without a reboot")
}
