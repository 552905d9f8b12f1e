package talosfake

import (
	"context"
	"fmt"
	"runtime"
	"time"

	"github.com/siderolabs/talos/pkg/machinery/api/common"
	"github.com/siderolabs/talos/pkg/machinery/api/machine"
	"github.com/siderolabs/talos/pkg/machinery/role"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/peer"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/emptypb"
)

// streamChunk is the size of the Data messages of server streams.
const streamChunk = 4096

// machineService implements the parts of Talos' MachineService the product uses.
type machineService struct {
	machine.UnimplementedMachineServiceServer

	node *Node
}

// authorize checks the roles in the client certificate's Organization, as
// apid's authorizer does; a missing role is PermissionDenied "not authorized".
func authorize(ctx context.Context, allowed ...role.Role) error {
	p, ok := peer.FromContext(ctx)
	if !ok {
		return status.Error(codes.PermissionDenied, "not authorized")
	}

	info, ok := p.AuthInfo.(credentials.TLSInfo)
	if !ok || len(info.State.PeerCertificates) == 0 {
		return status.Error(codes.PermissionDenied, "not authorized")
	}

	roles, _ := role.Parse(info.State.PeerCertificates[0].Subject.Organization)
	if roles.Includes(role.Admin) || roles.IncludesAny(role.MakeSet(allowed...)) {
		return nil
	}

	return status.Error(codes.PermissionDenied, "not authorized")
}

func (s *machineService) current() (*nodeConfig, *talosCluster) {
	c := s.node.cluster
	c.mu.Lock()
	defer c.mu.Unlock()

	return s.node.cfg, c.clusters[s.node.cfg.clusterID]
}

// checkControlplane mirrors machined's check for control-plane-only APIs.
func checkControlplane(cfg *nodeConfig, api string) error {
	if cfg.controlPlane() {
		return nil
	}

	return status.Errorf(codes.Unimplemented, "%s is only available on control plane nodes", api)
}

// Version reports the Talos version and the hcloud platform.
func (s *machineService) Version(ctx context.Context, _ *emptypb.Empty) (*machine.VersionResponse, error) {
	if err := authorize(ctx, role.Reader, role.Operator); err != nil {
		return nil, err
	}

	s.node.cluster.mu.Lock()
	tag := s.node.opts.TalosVersion
	s.node.cluster.mu.Unlock()

	return &machine.VersionResponse{
		Messages: []*machine.Version{{
			Version: &machine.VersionInfo{
				Tag:       tag,
				Sha:       "sandbox",
				GoVersion: runtime.Version(),
				Os:        "linux",
				Arch:      "amd64",
			},
			Platform: &machine.PlatformInfo{Name: "hcloud", Mode: "cloud"},
		}},
	}, nil
}

// Bootstrap starts etcd on this node, once per cluster, with machined's
// checks in order (Bootstrap in
// internal/app/machined/internal/server/v1alpha1/v1alpha1_server.go): the
// node's services must be up ("bootstrap is not available yet"), it must be
// a control plane with an etcd CA, and its etcd data directory empty. With
// RecoverEtcd, etcd starts from the snapshot uploaded with EtcdRecover.
func (s *machineService) Bootstrap(ctx context.Context, in *machine.BootstrapRequest) (*machine.BootstrapResponse, error) {
	if err := authorize(ctx); err != nil {
		return nil, err
	}

	c := s.node.cluster
	c.mu.Lock()
	defer c.mu.Unlock()

	if time.Now().Before(s.node.servicesAt) {
		return nil, status.Error(codes.FailedPrecondition, "bootstrap is not available yet")
	}

	cfg := s.node.cfg
	if !cfg.controlPlane() {
		return nil, status.Error(codes.FailedPrecondition, "bootstrap can only be performed on a control plane node")
	}

	if !cfg.etcdCA {
		return nil, status.Error(codes.InvalidArgument, "etcd is not configured, bootstrap is not possible")
	}

	tc := c.clusterLocked(cfg)
	if tc.member(s.node.opts.ServerID) != nil || (tc.bootstrapNode != 0 && !s.node.etcdLeft) {
		// Every control plane joins etcd once the cluster is bootstrapped, so
		// its data directory is not empty any more.
		return nil, status.Error(codes.AlreadyExists, "etcd data directory is not empty")
	}

	if tc.bootstrapNode != 0 && c.quorumLocked(tc) {
		// The fake keeps one etcd per Talos cluster: a control plane whose
		// data directory is empty joins the running etcd instead.
		return nil, status.Error(codes.AlreadyExists, "etcd data directory is not empty")
	}

	if in.GetRecoverEtcd() {
		if err := recoverFrom(tc, s.node.opts.ServerID); err != nil {
			// machined answers Bootstrap once etcd is started; the restore
			// fails in the etcd service, which never comes up
			// (internal/app/machined/pkg/system/services/etcd.go).
			c.opts.Logger.Warn("etcd service failed", "node", s.node.opts.Name, "error", err.Error())

			return &machine.BootstrapResponse{Messages: []*machine.Bootstrap{{}}}, nil
		}
	}

	tc.members = nil
	tc.bootstrapNode = s.node.opts.ServerID
	tc.bootstraps++
	s.node.etcdLeft = false
	tc.join(s.node)
	tc.leader = s.node.opts.ServerID
	c.reconcileLocked(tc)

	return &machine.BootstrapResponse{Messages: []*machine.Bootstrap{{}}}, nil
}

// EtcdMemberList lists the etcd members. machined asks etcd through the
// control plane endpoints (QueryLocal: this node's etcd only) with a client
// that waits for a ready connection, so while no etcd answers (before
// bootstrap, or without quorum) the call hangs until the caller's deadline
// and fails with DeadlineExceeded (internal/pkg/etcd/etcd.go,
// go.etcd.io/etcd/client/v3 WaitForReady).
func (s *machineService) EtcdMemberList(ctx context.Context, in *machine.EtcdMemberListRequest) (*machine.EtcdMemberListResponse, error) {
	if err := authorize(ctx, role.Reader, role.Operator, role.EtcdBackup); err != nil {
		return nil, err
	}

	cfg, _ := s.current()
	if err := checkControlplane(cfg, "member list"); err != nil {
		return nil, err
	}

	members, err := s.members(ctx, in.GetQueryLocal())
	if err != nil {
		return nil, err
	}

	out := make([]*machine.EtcdMember, 0, len(members))
	names := make([]string, 0, len(members))

	for _, m := range members {
		out = append(out, m.proto())
		names = append(names, m.name)
	}

	return &machine.EtcdMemberListResponse{Messages: []*machine.EtcdMembers{{Members: out, LegacyMembers: names}}}, nil
}

// members returns the etcd members once etcd answers this node (its own
// etcd for local, any healthy member otherwise, with quorum), waiting for
// ctx otherwise, as an etcd client with WaitForReady does.
func (s *machineService) members(ctx context.Context, local bool) ([]*etcdMember, error) {
	c := s.node.cluster

	c.mu.Lock()
	tc := c.clusters[s.node.cfg.clusterID]

	var out []*etcdMember

	if tc != nil && tc.bootstrapNode != 0 && c.quorumLocked(tc) && len(tc.members) > 0 &&
		(!local || c.healthyLocked(tc, s.node.opts.ServerID)) {
		out = append(out, tc.members...)
	}
	c.mu.Unlock()

	if out != nil {
		return out, nil
	}

	<-ctx.Done()

	return nil, status.FromContextError(ctx.Err()).Err() //nolint:wrapcheck // a gRPC status for the client
}

// EtcdSnapshot streams an etcd snapshot.
func (s *machineService) EtcdSnapshot(_ *machine.EtcdSnapshotRequest, srv grpc.ServerStreamingServer[common.Data]) error {
	if err := authorize(srv.Context(), role.EtcdBackup); err != nil {
		return err
	}

	cfg, _ := s.current()
	if err := checkControlplane(cfg, "etcd snapshot"); err != nil {
		return err
	}

	members, err := s.localMembers(srv.Context())
	if err != nil {
		return err
	}

	return sendChunks(srv, snapshotBlob(cfg.clusterID, members, time.Now()))
}

// Kubeconfig streams an admin kubeconfig as a .tar.gz, like machined.
func (s *machineService) Kubeconfig(_ *emptypb.Empty, srv grpc.ServerStreamingServer[common.Data]) error {
	if err := authorize(srv.Context()); err != nil {
		return err
	}

	cfg, _ := s.current()
	if err := checkControlplane(cfg, "kubeconfig"); err != nil {
		return err
	}

	// The server is the machine config's cluster.controlPlane.endpoint, as
	// kubeconfig.GenerateAdmin writes it (pkg/kubeconfig/generate.go), not
	// the address the client dialled.
	kc, err := adminKubeconfig(cfg.k8sCA, cfg.clusterName, cfg.endpoint.String())
	if err != nil {
		return status.Error(codes.Internal, err.Error())
	}

	archive, err := tarGzipSingle("kubeconfig", kc)
	if err != nil {
		return status.Error(codes.Internal, err.Error())
	}

	return sendChunks(srv, archive)
}

func sendChunks(srv grpc.ServerStreamingServer[common.Data], b []byte) error {
	for len(b) > 0 {
		n := min(len(b), streamChunk)
		if err := srv.Send(&common.Data{Bytes: b[:n]}); err != nil {
			return fmt.Errorf("send stream chunk: %w", err)
		}

		b = b[n:]
	}

	return nil
}
