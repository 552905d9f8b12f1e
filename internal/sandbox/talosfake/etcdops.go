package talosfake

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/siderolabs/talos/pkg/machinery/api/common"
	"github.com/siderolabs/talos/pkg/machinery/api/machine"
	"github.com/siderolabs/talos/pkg/machinery/role"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// etcd's errors as its client reports them (go.etcd.io/etcd/api/v3/v3rpc/rpctypes).
// machined wraps them with fmt.Errorf, so the client sees codes.Unknown
// with the full message; only "member not found" is mapped to NotFound.
var (
	errNotEnoughStarted = errors.New("etcdserver: re-configuration failed due to not enough started members")
	errUnhealthy        = errors.New("etcdserver: unhealthy cluster")
	errMemberNotFound   = errors.New("etcdserver: member not found")
)

// leaveRetry is how long LeaveCluster retries an unhealthy cluster
// (internal/pkg/etcd/etcd.go: retry.Constant(5*time.Minute)).
const leaveRetry = 5 * time.Minute

// localMembers is the member list from this node's own etcd (snapshots read
// the local member).
func (s *machineService) localMembers(ctx context.Context) ([]*machine.EtcdMember, error) {
	members, err := s.members(ctx, true)
	if err != nil {
		return nil, err
	}

	out := make([]*machine.EtcdMember, 0, len(members))
	for _, m := range members {
		out = append(out, m.proto())
	}

	return out, nil
}

// removeMemberLocked removes a member the way etcd's strict reconfiguration
// check allows it (mayRemoveMember in etcd's server): never the last voting
// member, a downed member always, a running one only if the members still
// running keep quorum of the new cluster.
func (c *Cluster) removeMemberLocked(tc *talosCluster, id uint64) error {
	idx := -1

	for i, m := range tc.members {
		if m.id == id {
			idx = i
		}
	}

	if idx < 0 {
		return errMemberNotFound
	}

	target := tc.members[idx]

	if len(tc.members) == 1 {
		return errNotEnoughStarted
	}

	if c.healthyLocked(tc, target.serverID) {
		active := 0

		for _, m := range tc.members {
			if c.healthyLocked(tc, m.serverID) {
				active++
			}
		}

		if active-1 < 1+(len(tc.members)-1)/2 {
			return errUnhealthy
		}
	}

	tc.members = append(tc.members[:idx:idx], tc.members[idx+1:]...)

	if n := c.nodes[target.serverID]; n != nil && n.cfg.clusterID == tc.id {
		// The removed member's etcd stops; it does not rejoin before its
		// data is wiped and it boots again.
		n.etcdLeft = true
	}

	c.reconcileLocked(tc)

	return nil
}

// etcdCall is the common start of the etcd member calls: an authorized
// client, a control plane (what names the call in the refusal), and an
// etcd with quorum.
func (s *machineService) etcdCall(ctx context.Context, what string) (*talosCluster, error) {
	if err := authorize(ctx); err != nil {
		return nil, err
	}

	cfg, _ := s.current()
	if err := checkControlplane(cfg, what); err != nil {
		return nil, err
	}

	return s.waitQuorum(ctx)
}

// waitQuorum blocks until the node's cluster has quorum (etcd requests
// need a leader) or ctx ends.
func (s *machineService) waitQuorum(ctx context.Context) (*talosCluster, error) {
	c := s.node.cluster

	for {
		c.mu.Lock()
		tc := c.clusters[s.node.cfg.clusterID]
		ok := tc != nil && tc.bootstrapNode != 0 && len(tc.members) > 0 && c.quorumLocked(tc)
		c.mu.Unlock()

		if ok {
			return tc, nil
		}

		if !sleepCtx(ctx, 50*time.Millisecond) {
			return nil, status.FromContextError(ctx.Err()).Err() //nolint:wrapcheck // a gRPC status for the client
		}
	}
}

// EtcdRemoveMemberByID removes a member by ID (machined: "failed to remove
// member: failed to remove member ID: <etcd error>"; NotFound for an
// unknown ID).
func (s *machineService) EtcdRemoveMemberByID(ctx context.Context, in *machine.EtcdRemoveMemberByIDRequest) (*machine.EtcdRemoveMemberByIDResponse, error) {
	tc, err := s.etcdCall(ctx, "etcd remove member")
	if err != nil {
		return nil, err
	}

	c := s.node.cluster
	c.mu.Lock()
	err = c.removeMemberLocked(tc, in.GetMemberId())
	c.mu.Unlock()

	if err != nil {
		wrapped := fmt.Errorf("failed to remove member %d: %w", in.GetMemberId(), err)
		if errors.Is(err, errMemberNotFound) {
			return nil, status.Error(codes.NotFound, wrapped.Error())
		}

		return nil, fmt.Errorf("failed to remove member: %w", wrapped)
	}

	return &machine.EtcdRemoveMemberByIDResponse{Messages: []*machine.EtcdRemoveMemberByID{{}}}, nil
}

// EtcdLeaveCluster removes this node from etcd, retrying while the cluster
// is unhealthy, then stops its etcd and wipes its data (LeaveCluster in
// internal/pkg/etcd/etcd.go).
func (s *machineService) EtcdLeaveCluster(ctx context.Context, _ *machine.EtcdLeaveClusterRequest) (*machine.EtcdLeaveClusterResponse, error) {
	if err := authorize(ctx); err != nil {
		return nil, err
	}

	cfg, _ := s.current()
	if err := checkControlplane(cfg, "etcd leave"); err != nil {
		return nil, err
	}

	if err := s.node.leaveEtcd(ctx); err != nil {
		return nil, fmt.Errorf("failed to leave cluster: %w", err)
	}

	return &machine.EtcdLeaveClusterResponse{Messages: []*machine.EtcdLeaveCluster{{}}}, nil
}

// leaveEtcd removes the node's own member, retrying errUnhealthy for up to
// leaveRetry; an already removed member is fine.
func (n *Node) leaveEtcd(ctx context.Context) error {
	s := &machineService{node: n}

	tc, err := s.waitQuorum(ctx)
	if err != nil {
		return err
	}

	c := n.cluster
	deadline := time.Now().Add(leaveRetry)

	for {
		c.mu.Lock()

		m := tc.member(n.opts.ServerID)
		if m == nil {
			n.etcdLeft = true
			c.reconcileLocked(tc)
			c.mu.Unlock()

			return nil
		}

		err := c.removeMemberLocked(tc, m.id)
		c.mu.Unlock()

		switch {
		case err == nil:
			return nil
		case !errors.Is(err, errUnhealthy) || time.Now().After(deadline):
			return fmt.Errorf("failed to remove member %d: %w", m.id, err)
		}

		if !sleepCtx(ctx, 100*time.Millisecond) {
			return fmt.Errorf("failed to remove member %d: %w (%w)", m.id, err, ctx.Err())
		}
	}
}

// EtcdForfeitLeadership moves etcd leadership away from this node; it
// answers the new leader's name, or "" when this node did not lead.
func (s *machineService) EtcdForfeitLeadership(ctx context.Context, _ *machine.EtcdForfeitLeadershipRequest) (*machine.EtcdForfeitLeadershipResponse, error) {
	tc, err := s.etcdCall(ctx, "etcd forfeit leadership")
	if err != nil {
		return nil, err
	}

	c := s.node.cluster
	c.mu.Lock()
	defer c.mu.Unlock()

	if len(tc.members) == 1 {
		return nil, errors.New("failed to forfeit leadership: cannot forfeit leadership, only one member")
	}

	if tc.member(s.node.opts.ServerID) == nil {
		return nil, status.Error(codes.FailedPrecondition, "etcd member not found for this node")
	}

	next := ""

	if tc.leader == s.node.opts.ServerID {
		for _, m := range tc.members {
			if m.serverID != s.node.opts.ServerID && c.healthyLocked(tc, m.serverID) {
				tc.leader, next = m.serverID, m.name

				break
			}
		}
	}

	return &machine.EtcdForfeitLeadershipResponse{Messages: []*machine.EtcdForfeitLeadership{{Member: next}}}, nil
}

// EtcdRecover receives a snapshot (a client stream of chunks) to restore
// from at the next Bootstrap{RecoverEtcd: true}.
func (s *machineService) EtcdRecover(srv grpc.ClientStreamingServer[common.Data, machine.EtcdRecoverResponse]) error {
	if err := authorize(srv.Context()); err != nil {
		return err
	}

	cfg, _ := s.current()
	if err := checkControlplane(cfg, "etcd recover"); err != nil {
		return err
	}

	var buf bytes.Buffer

	for {
		msg, err := srv.Recv()
		if errors.Is(err, io.EOF) {
			break
		}

		if err != nil {
			return err //nolint:wrapcheck // the stream's own status
		}

		buf.Write(msg.GetBytes())
	}

	c := s.node.cluster
	c.mu.Lock()
	tc := c.clusterLocked(cfg)
	tc.recovery[s.node.opts.ServerID] = buf.Bytes()
	c.mu.Unlock()

	return srv.SendAndClose(&machine.EtcdRecoverResponse{Messages: []*machine.EtcdRecover{{}}}) //nolint:wrapcheck // the stream's own status
}

// recoverFrom checks the uploaded snapshot as etcdutl's snapshot status and
// restore do (bbolt magic, trailing SHA-256) and consumes it.
func recoverFrom(tc *talosCluster, serverID int64) error {
	snap, ok := tc.recovery[serverID]
	if !ok {
		return errors.New("error verifying snapshot: open /var/lib/etcd.snapshot: no such file or directory")
	}

	delete(tc.recovery, serverID)

	if len(snap) < boltPageSize+sha256.Size || binary.LittleEndian.Uint32(snap[16:]) != boltMagic {
		return errors.New("error verifying snapshot: invalid database")
	}

	body, sum := snap[:len(snap)-sha256.Size], snap[len(snap)-sha256.Size:]
	if got := sha256.Sum256(body); !bytes.Equal(got[:], sum) {
		return errors.New("error recovering from the snapshot: snapshot file integrity check failed. 32 bytes of trailing sha256 checksum does not match")
	}

	// etcdutl restore keeps the keyspace and rewrites the membership: the
	// fake's keyspace is the member list the snapshot carries.
	tc.restored = snapshotMembers(body)

	return nil
}

// Reset leaves etcd (graceful control planes), wipes the system partitions
// asked for (all of STATE and EPHEMERAL by default) and reboots or shuts the
// node down, in the background after answering, as machined's reset
// sequence does. Without STATE the node boots into maintenance mode.
func (s *machineService) Reset(ctx context.Context, in *machine.ResetRequest) (*machine.ResetResponse, error) {
	if err := authorize(ctx); err != nil {
		return nil, err
	}

	wipeState, wipeEphemeral := true, true

	if parts := in.GetSystemPartitionsToWipe(); len(parts) > 0 {
		wipeState, wipeEphemeral = false, false

		for _, p := range parts {
			switch p.GetLabel() {
			case "STATE":
				wipeState = wipeState || p.GetWipe()
			case "EPHEMERAL":
				wipeEphemeral = wipeEphemeral || p.GetWipe()
			case "META":
			default:
				return nil, fmt.Errorf("failed to reset: volume %q is not located", p.GetLabel())
			}
		}
	}

	n := s.node
	cfg, _ := s.current()

	go func() {
		if in.GetGraceful() && cfg.controlPlane() {
			lctx, cancel := context.WithTimeout(n.ctx, leaveRetry)
			err := n.leaveEtcd(lctx)

			cancel()

			if err != nil {
				n.cluster.opts.Logger.Warn("reset failed", "node", n.opts.Name, "error", err.Error())

				return
			}
		}

		n.resetDisks(wipeState, wipeEphemeral, in.GetReboot())
	}()

	return &machine.ResetResponse{Messages: []*machine.Reset{{ActorId: actorID()}}}, nil
}

// resetDisks wipes STATE (the config) and/or EPHEMERAL (etcd data) and
// reboots, or shuts the node down.
func (n *Node) resetDisks(wipeState, wipeEphemeral, reboot bool) {
	c := n.cluster
	apply := func() {
		if wipeEphemeral {
			if tc := c.clusters[n.cfg.clusterID]; tc != nil {
				if m := tc.member(n.opts.ServerID); m != nil {
					// etcd data gone without leaving: the member stays, dead.
					n.etcdLeft = true
				}
			}
		}

		if wipeState {
			c.persisted[n.opts.ServerID] = nil
			n.cfg = maintenanceConfig(n.opts.ServerID)
		}
	}

	if reboot {
		n.reboot(apply)

		return
	}

	c.mu.Lock()
	apply()
	c.mu.Unlock()

	go n.Stop()
}

// Reboot reboots the node after answering; a staged config takes effect.
func (s *machineService) Reboot(ctx context.Context, _ *machine.RebootRequest) (*machine.RebootResponse, error) {
	if err := authorize(ctx, role.Operator); err != nil {
		return nil, err
	}

	n := s.node

	go func() {
		// Let the answer leave before the API goes away.
		if sleepCtx(n.ctx, 50*time.Millisecond) {
			n.reboot(nil)
		}
	}()

	return &machine.RebootResponse{Messages: []*machine.Reboot{{ActorId: actorID()}}}, nil
}

// actorID is a random UUID-looking ID, as machined returns for sequences.
func actorID() string {
	var b [16]byte
	_, _ = rand.Read(b[:]) //nolint:errcheck // crypto/rand.Read never fails

	h := hex.EncodeToString(b[:])

	return h[0:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:]
}
