package talosfake

import (
	"context"
	"fmt"
	"net"
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

	return &machine.VersionResponse{
		Messages: []*machine.Version{{
			Version: &machine.VersionInfo{
				Tag:       s.node.opts.TalosVersion,
				Sha:       "sandbox",
				GoVersion: runtime.Version(),
				Os:        "linux",
				Arch:      "amd64",
			},
			Platform: &machine.PlatformInfo{Name: "hcloud", Mode: "cloud"},
		}},
	}, nil
}

// Bootstrap starts etcd on this node, once per cluster.
func (s *machineService) Bootstrap(ctx context.Context, _ *machine.BootstrapRequest) (*machine.BootstrapResponse, error) {
	if err := authorize(ctx); err != nil {
		return nil, err
	}

	c := s.node.cluster
	c.mu.Lock()
	defer c.mu.Unlock()

	cfg := s.node.cfg
	if !cfg.controlPlane() {
		return nil, status.Error(codes.FailedPrecondition, "bootstrap can only be performed on a control plane node")
	}

	tc := c.clusterLocked(cfg)
	if tc.bootstrapNode != 0 {
		// Every control plane joins etcd once the cluster is bootstrapped, so
		// its data directory is not empty any more.
		return nil, status.Error(codes.AlreadyExists, "etcd data directory is not empty")
	}

	tc.bootstrapNode = s.node.opts.ServerID
	tc.bootstraps++
	c.reconcileLocked(tc)

	return &machine.BootstrapResponse{Messages: []*machine.Bootstrap{{}}}, nil
}

// EtcdMemberList lists the etcd members once the cluster is bootstrapped.
func (s *machineService) EtcdMemberList(ctx context.Context, _ *machine.EtcdMemberListRequest) (*machine.EtcdMemberListResponse, error) {
	if err := authorize(ctx, role.Reader, role.Operator); err != nil {
		return nil, err
	}

	cfg, _ := s.current()
	if err := checkControlplane(cfg, "member list"); err != nil {
		return nil, err
	}

	members, err := s.members()
	if err != nil {
		return nil, err
	}

	return &machine.EtcdMemberListResponse{Messages: []*machine.EtcdMembers{{Members: members}}}, nil
}

// members returns the etcd member list as seen from this node, or
// Unavailable when etcd does not run here (before bootstrap).
func (s *machineService) members() ([]*machine.EtcdMember, error) {
	c := s.node.cluster
	c.mu.Lock()
	defer c.mu.Unlock()

	nodes := c.membersLocked(c.clusters[s.node.cfg.clusterID])

	running := false

	for _, m := range nodes {
		if m == s.node {
			running = true
		}
	}

	if !running {
		return nil, status.Error(codes.Unavailable, "etcd is not running on this node: the cluster is not bootstrapped yet")
	}

	out := make([]*machine.EtcdMember, 0, len(nodes))
	for _, m := range nodes {
		out = append(out, m.etcdMember())
	}

	return out, nil
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

	members, err := s.members()
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

	kc, err := adminKubeconfig(cfg.k8sCA, cfg.clusterName, s.node.cluster.apiServerURL(s.node))
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

// apiServerURL is the Kubernetes API URL put in kubeconfigs: the public IP of
// the bootstrapped control plane, else of the first running control plane
// with one (every etcd member serves the sandbox Kubernetes API).
func (c *Cluster) apiServerURL(self *Node) string {
	c.mu.Lock()
	defer c.mu.Unlock()

	host := ""

	if tc := c.clusters[self.cfg.clusterID]; tc != nil {
		if b := c.nodes[tc.bootstrapNode]; b != nil && b.opts.PublicIP != "" {
			host = b.opts.PublicIP
		}
	}

	if host == "" {
		for _, n := range c.sortedNodesLocked() {
			if n.cfg.clusterID == self.cfg.clusterID && n.cfg.controlPlane() && n.opts.PublicIP != "" {
				host = n.opts.PublicIP

				break
			}
		}
	}

	if host == "" {
		host = self.opts.PublicIP
	}

	return "https://" + net.JoinHostPort(host, "6443")
}
