package talosfake

import (
	"context"

	cosiv1alpha1 "github.com/cosi-project/runtime/api/v1alpha1"
	"github.com/cosi-project/runtime/pkg/state"
	"github.com/cosi-project/runtime/pkg/state/protobuf/server"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
)

// routedState is apid's one-to-one proxy for the COSI state API: a call
// with the "node" metadata (talosctl -n, machinery client.WithNode) goes to
// that node's API over the private network, one without it to the local
// node (siderolabs/talos internal/app/apid/pkg/director/director.go). The
// sandbox finds the target among the fake nodes by private or public IP;
// an address no running node has is unreachable, as apid's dial would be.
type routedState struct {
	cosiv1alpha1.UnimplementedStateServer

	node *Node
}

func newStateServer(n *Node) cosiv1alpha1.StateServer {
	return &routedState{node: n}
}

func localState(n *Node) cosiv1alpha1.StateServer {
	return server.NewState(state.Filter(n.res, n.accessPolicy))
}

func (r *routedState) target(ctx context.Context) (cosiv1alpha1.StateServer, error) {
	md, _ := metadata.FromIncomingContext(ctx)
	addrs := md.Get("node")

	if len(addrs) == 0 {
		return localState(r.node), nil
	}

	c := r.node.cluster
	c.mu.Lock()
	defer c.mu.Unlock()

	for _, n := range c.nodes {
		if (n.opts.PrivateIP != addrs[0] && n.opts.PublicIP != addrs[0]) || n.down || n.cfg == nil || n.cfg.maintenance {
			continue
		}

		if n.cfg.clusterID != r.node.cfg.clusterID {
			// The target's apid trusts only its own cluster's CA.
			return nil, status.Errorf(codes.Unavailable, "connection error: desc = \"transport: authentication handshake failed: tls: failed to verify certificate: x509: certificate signed by unknown authority\"")
		}

		return localState(n), nil
	}

	return nil, status.Errorf(codes.Unavailable, "connection error: desc = \"transport: Error while dialing: dial tcp %s:%d: connect: connection refused\"", addrs[0], DefaultPort)
}

// routed makes a unary call on the call's target node.
func routed[Req, Resp any](r *routedState, ctx context.Context, in Req,
	call func(cosiv1alpha1.StateServer, context.Context, Req) (Resp, error),
) (Resp, error) {
	t, err := r.target(ctx)
	if err != nil {
		var none Resp
		return none, err
	}

	return call(t, ctx, in) //nolint:wrapcheck // the target's own answer
}

// Get implements cosiv1alpha1.StateServer.
func (r *routedState) Get(ctx context.Context, in *cosiv1alpha1.GetRequest) (*cosiv1alpha1.GetResponse, error) {
	return routed(r, ctx, in, cosiv1alpha1.StateServer.Get)
}

// List implements cosiv1alpha1.StateServer.
func (r *routedState) List(in *cosiv1alpha1.ListRequest, srv grpc.ServerStreamingServer[cosiv1alpha1.ListResponse]) error {
	t, err := r.target(srv.Context())
	if err != nil {
		return err
	}

	return t.List(in, srv) //nolint:wrapcheck // the target's own answer
}

// Watch implements cosiv1alpha1.StateServer.
func (r *routedState) Watch(in *cosiv1alpha1.WatchRequest, srv grpc.ServerStreamingServer[cosiv1alpha1.WatchResponse]) error {
	t, err := r.target(srv.Context())
	if err != nil {
		return err
	}

	return t.Watch(in, srv) //nolint:wrapcheck // the target's own answer
}

// Create implements cosiv1alpha1.StateServer.
func (r *routedState) Create(ctx context.Context, in *cosiv1alpha1.CreateRequest) (*cosiv1alpha1.CreateResponse, error) {
	return routed(r, ctx, in, cosiv1alpha1.StateServer.Create)
}

// Update implements cosiv1alpha1.StateServer.
func (r *routedState) Update(ctx context.Context, in *cosiv1alpha1.UpdateRequest) (*cosiv1alpha1.UpdateResponse, error) {
	return routed(r, ctx, in, cosiv1alpha1.StateServer.Update)
}

// Destroy implements cosiv1alpha1.StateServer.
func (r *routedState) Destroy(ctx context.Context, in *cosiv1alpha1.DestroyRequest) (*cosiv1alpha1.DestroyResponse, error) {
	return routed(r, ctx, in, cosiv1alpha1.StateServer.Destroy)
}
