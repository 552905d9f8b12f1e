package talosapi

import (
	"context"
	"fmt"
	"strconv"

	"github.com/siderolabs/talos/pkg/machinery/api/machine"
	"github.com/siderolabs/talos/pkg/machinery/client"
	"google.golang.org/grpc/codes"
)

// EtcdLeave makes this control plane leave etcd (MachineService
// EtcdLeaveCluster): machined removes its own member, retrying while the
// cluster is unhealthy, then stops etcd on the node.
func (c *Client) EtcdLeave(ctx context.Context) error {
	if err := c.c.EtcdLeaveCluster(ctx, &machine.EtcdLeaveClusterRequest{}); err != nil {
		return c.wrap("leave etcd", err)
	}

	return nil
}

// EtcdForfeitLeadership moves etcd leadership away from this node, so that
// its leaving does not cost an election in the middle of a request.
func (c *Client) EtcdForfeitLeadership(ctx context.Context) error {
	if _, err := c.c.EtcdForfeitLeadership(ctx, &machine.EtcdForfeitLeadershipRequest{}); err != nil {
		return c.wrap("forfeit etcd leadership", err)
	}

	return nil
}

// EtcdRemoveMember removes another member by its ID (hex, as Member.ID
// holds it) through this node's etcd: the way to drop a member whose node
// no longer answers. A member already gone (NotFound) counts as removed.
func (c *Client) EtcdRemoveMember(ctx context.Context, hexID string) error {
	id, err := strconv.ParseUint(hexID, 16, 64)
	if err != nil {
		return fmt.Errorf("remove etcd member %q: not a hex member ID: %w", hexID, err)
	}

	err = c.c.EtcdRemoveMemberByID(ctx, &machine.EtcdRemoveMemberByIDRequest{MemberId: id})
	if client.StatusCode(err) == codes.NotFound {
		return nil
	}

	if err != nil {
		return c.wrap("remove etcd member "+hexID, err)
	}

	return nil
}
