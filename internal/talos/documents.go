package talos

import (
	"fmt"
	"strings"

	"github.com/siderolabs/talos/pkg/machinery/cel"
	"github.com/siderolabs/talos/pkg/machinery/cel/celenv"
	"github.com/siderolabs/talos/pkg/machinery/config/config"
	"github.com/siderolabs/talos/pkg/machinery/config/types/block"
	"github.com/siderolabs/talos/pkg/machinery/config/types/network"
	"github.com/siderolabs/talos/pkg/machinery/config/types/runtime/extensions"
	"github.com/siderolabs/talos/pkg/machinery/constants"
	blockres "github.com/siderolabs/talos/pkg/machinery/resources/block"
)

// TailscaleServiceName is the extension service name of the
// siderolabs/tailscale system extension (its README configures it with an
// ExtensionServiceConfig named "tailscale").
const TailscaleServiceName = "tailscale"

// stateVolume encrypts STATE with a key derived from the node ID (slot 0).
// STATE cannot use lockToState (machinery block.VolumeConfigV1Alpha1.Validate).
func stateVolume() *block.VolumeConfigV1Alpha1 {
	v := block.NewVolumeConfigV1Alpha1()
	v.MetaName = constants.StatePartitionLabel
	v.EncryptionSpec = block.EncryptionSpec{
		EncryptionProvider: blockres.EncryptionProviderLUKS2,
		EncryptionKeys: []block.EncryptionKey{{
			KeySlot:   0,
			KeyNodeID: &block.EncryptionKeyNodeID{},
		}},
	}

	return v
}

// staticLockedKey is the static passphrase key, mixed with the salt stored on
// STATE (lockToState, Talos >= 1.11): the volume is unreadable without STATE.
func staticLockedKey(passphrase string) block.EncryptionSpec {
	return block.EncryptionSpec{
		EncryptionProvider: blockres.EncryptionProviderLUKS2,
		EncryptionKeys: []block.EncryptionKey{{
			KeySlot:        0,
			KeyStatic:      &block.EncryptionKeyStatic{KeyData: passphrase},
			KeyLockToSTATE: new(true),
		}},
	}
}

// ephemeralVolume encrypts EPHEMERAL with the static key locked to STATE.
func ephemeralVolume(passphrase string) *block.VolumeConfigV1Alpha1 {
	v := block.NewVolumeConfigV1Alpha1()
	v.MetaName = constants.EphemeralPartitionLabel
	v.EncryptionSpec = staticLockedKey(passphrase)

	return v
}

// longhornDiskSelector matches the attached Hetzner volume: any writable,
// non-CD-ROM disk other than the system disk that is at least sizeGB decimal
// gigabytes (Hetzner sizes volumes in GB; a "10 GB" volume is never smaller
// than 10e9 bytes). The CEL variables are machinery's celenv.DiskLocator:
// `disk` (block.DiskSpec) and `system_disk`.
func longhornDiskSelector(sizeGB int) string {
	return fmt.Sprintf("!system_disk && !disk.readonly && !disk.cdrom && disk.size >= %du * GB", sizeGB)
}

// longhornVolume is the encrypted XFS partition Longhorn uses on the attached
// Hetzner volume, mounted at /var/mnt/longhorn. It takes at least 90% of the
// requested size (room for the GPT and LUKS headers) and grows to fill the
// disk, also after the Hetzner volume is resized.
func longhornVolume(sizeGB int, passphrase string) (*block.UserVolumeConfigV1Alpha1, error) {
	expr, err := cel.ParseBooleanExpression(longhornDiskSelector(sizeGB), celenv.DiskLocator())
	if err != nil {
		return nil, fmt.Errorf("build the longhorn volume disk selector: %w", err)
	}

	minGB := max(sizeGB*9/10, 1)

	minSize := block.MustByteSize(fmt.Sprintf("%dGB", minGB))

	v := block.NewUserVolumeConfigV1Alpha1()
	v.MetaName = LonghornVolumeName
	v.VolumeType = new(blockres.VolumeTypePartition)
	v.ProvisioningSpec = block.ProvisioningSpec{
		DiskSelectorSpec:    block.DiskSelector{Match: expr},
		ProvisioningMinSize: minSize,
		ProvisioningMaxSize: block.MustSize("100%"),
		ProvisioningGrow:    new(true),
	}
	v.FilesystemSpec = block.FilesystemSpec{FilesystemType: blockres.FilesystemTypeXFS}
	v.EncryptionSpec = staticLockedKey(passphrase)

	return v, nil
}

// vipDocument announces the API VIP through the Hetzner API: on failover
// Talos re-assigns the alias IP to the new leader's server. A layer-2 VIP
// does not work on Hetzner networks.
func vipDocument(vip, link, token string) *network.HCloudVIPConfigV1Alpha1 {
	d := network.NewHCloudVIPConfigV1Alpha1(vip)
	d.LinkName = link
	d.APIToken = token

	return d
}

// tailscaleDocument configures the siderolabs/tailscale extension service.
// TS_AUTH_ONCE keeps a rebooting node from logging in again with a
// (possibly expired) auth key once it has joined the tailnet. TS_ROUTES
// (read by tailscale's containerboot, which the extension runs) advertises
// the private network as a subnet route: once approved in the Tailscale
// admin console, the operator reaches the VIP through any control plane.
func tailscaleDocument(authKey string, routes []string) *extensions.ServiceConfigV1Alpha1 {
	d := extensions.NewServicesConfigV1Alpha1()
	d.ServiceName = TailscaleServiceName
	d.ServiceEnvironment = []string{
		"TS_AUTHKEY=" + authKey,
		"TS_AUTH_ONCE=true",
	}

	if len(routes) > 0 {
		d.ServiceEnvironment = append(d.ServiceEnvironment, "TS_ROUTES="+strings.Join(routes, ","))
	}

	return d
}

// extraDocuments lists the documents added to the generated v1alpha1 config
// for group g, in a fixed order.
func extraDocuments(c normalized, g NodeGroup) ([]config.Document, error) {
	docs := []config.Document{
		stateVolume(),
		ephemeralVolume(c.DiskPassphrase),
	}

	if g.VolumeSizeGB > 0 {
		v, err := longhornVolume(g.VolumeSizeGB, c.DiskPassphrase)
		if err != nil {
			return nil, err
		}

		docs = append(docs, v)
	}

	if g.Role == RoleControlPlane {
		if c.VIP != "" {
			docs = append(docs, vipDocument(c.VIP, c.vipLink, c.HCloudToken))
		}

		if c.TailscaleAuthKey != "" {
			docs = append(docs, tailscaleDocument(c.TailscaleAuthKey, c.TailscaleRoutes))
		}
	}

	return docs, nil
}
