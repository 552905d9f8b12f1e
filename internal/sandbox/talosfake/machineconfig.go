package talosfake

import (
	"context"
	"strings"

	"github.com/cosi-project/runtime/pkg/resource"
	"github.com/cosi-project/runtime/pkg/resource/meta"
	"github.com/cosi-project/runtime/pkg/safe"
	"github.com/cosi-project/runtime/pkg/state"
	"github.com/siderolabs/talos/pkg/machinery/config/configloader"
	configres "github.com/siderolabs/talos/pkg/machinery/resources/config"
)

// publishConfigLocked reports the node's machine config the way machined
// does, as COSI MachineConfig resources in the "config" namespace
// (pkg/machinery/resources/config/machine_config.go): ID "v1alpha1"
// (ActiveID) is the config the node runs, ID "persistent" the one on its
// STATE partition, which is ahead of the active one after a STAGED apply.
// A node in maintenance mode has neither. Called with cluster.mu held
// whenever the node's config or its STATE copy changes.
func (n *Node) publishConfigLocked() {
	active := n.cfg.raw
	if n.cfg.maintenance {
		active = nil
	}

	persistent, ok := n.cluster.persisted[n.opts.ServerID]
	if !ok {
		// Talos saves the config it booted with (user_data) to STATE.
		persistent = active
	}

	// In-memory state: no I/O to bound.
	ctx := context.Background()

	for _, c := range []struct {
		id  resource.ID
		raw []byte
	}{{configres.ActiveID, active}, {configres.PersistentID, persistent}} {
		if err := n.putConfig(ctx, c.id, c.raw); err != nil {
			n.cluster.opts.Logger.Warn("report machine config", "node", n.opts.Name, "id", c.id, "error", err.Error())
		}
	}
}

// putConfig writes one MachineConfig resource, or removes it for no config.
func (n *Node) putConfig(ctx context.Context, id resource.ID, raw []byte) error {
	if len(raw) == 0 {
		err := n.res.Destroy(ctx, resource.NewMetadata(configres.NamespaceName, configres.MachineConfigType, id, resource.VersionUndefined))
		if err != nil && !state.IsNotFoundError(err) {
			return err //nolint:wrapcheck // logged by the caller
		}

		return nil
	}

	p, err := configloader.NewFromBytes(raw)
	if err != nil {
		return err //nolint:wrapcheck // logged by the caller
	}

	return upsert(ctx, n.res, configres.NewMachineConfigWithID(p, id))
}

// accessPolicy is machined's rule for the COSI API
// (internal/app/resources/access.go, AccessPolicy): read-only, and a
// resource type defined as Sensitive (MachineConfig among them) only for
// the os:admin role.
func (n *Node) accessPolicy(ctx context.Context, access state.Access) error {
	if err := readOnly(ctx, access); err != nil {
		return err
	}

	rd, err := safe.StateGet[*meta.ResourceDefinition](ctx, n.res,
		resource.NewMetadata(meta.NamespaceName, meta.ResourceDefinitionType, strings.ToLower(access.ResourceType), resource.VersionUndefined))
	if err != nil {
		// Undefined types answer as before: not found.
		return nil //nolint:nilerr // the read itself reports it
	}

	if rd.TypedSpec().Sensitivity == meta.Sensitive {
		return authorize(ctx)
	}

	return nil
}
