package talosapi

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/cosi-project/runtime/pkg/resource/meta"
	"github.com/cosi-project/runtime/pkg/safe"
	"github.com/siderolabs/talos/pkg/machinery/api/machine"
	"github.com/siderolabs/talos/pkg/machinery/client"
	"github.com/siderolabs/talos/pkg/machinery/nethelpers"
	"github.com/siderolabs/talos/pkg/machinery/resources/network"
	"google.golang.org/grpc/codes"
)

// Member is one etcd member.
type Member struct {
	Name     string
	ID       string // hex, as talosctl etcd members prints it
	Learner  bool
	PeerURLs []string
}

// Link is a network link as the node sees it (network.LinkStatus).
type Link struct {
	Name         string
	Up           bool
	MTU          int
	HardwareAddr string
}

// Address is an address assigned to a link (network.AddressStatus).
type Address struct {
	Link string
	CIDR string
}

// EtcdMembers lists the etcd members as seen by the node. Before bootstrap
// the node answers Unavailable (etcd does not run), which IsRetryable reports.
func (c *Client) EtcdMembers(ctx context.Context) ([]Member, error) {
	resp, err := c.c.EtcdMemberList(ctx, &machine.EtcdMemberListRequest{})
	if err != nil {
		return nil, c.wrap("list etcd members", err)
	}

	var out []Member

	for _, msg := range resp.GetMessages() {
		for _, m := range msg.GetMembers() {
			out = append(out, Member{
				Name:     m.GetHostname(),
				ID:       strconv.FormatUint(m.GetId(), 16),
				Learner:  m.GetIsLearner(),
				PeerURLs: m.GetPeerUrls(),
			})
		}
	}

	return out, nil
}

// memberProbe bounds the "is etcd running" question BootstrapOnce asks
// first: before bootstrap machined's etcd client waits for a connection
// until the caller's deadline, so no answer in time means no etcd here.
// The probe costs its whole length on every first bootstrap, so it is
// short: a running etcd is local to the node and answers in milliseconds,
// and a probe that misses one only leads to a Bootstrap call, which Talos
// refuses with AlreadyExists when the node holds etcd data (counted as
// done below).
const memberProbe = time.Second

// BootstrapOnce bootstraps etcd on this node unless the cluster already is:
// it asks etcd first (a member list within memberProbe) and calls Bootstrap
// only when etcd does not answer; Talos' answer to a repeated bootstrap
// (AlreadyExists "etcd data directory is not empty") counts as done. While
// the node answers FailedPrecondition "bootstrap is not available yet" (its
// services are still starting) it retries until ctx ends. It reports
// whether this call bootstrapped the cluster. Always use the same control
// plane.
func (c *Client) BootstrapOnce(ctx context.Context) (bool, error) {
	for {
		did, err := c.bootstrapOnce(ctx)
		if err == nil || !IsBootstrapNotReady(err) {
			return did, err
		}

		t := time.NewTimer(250 * time.Millisecond)
		select {
		case <-ctx.Done():
			t.Stop()

			return false, fmt.Errorf("bootstrap etcd at %s: %w (last error: %w)", c.endpoint, ctx.Err(), err)
		case <-t.C:
		}
	}
}

func (c *Client) bootstrapOnce(ctx context.Context) (bool, error) {
	pctx, cancel := context.WithTimeout(ctx, memberProbe)
	members, err := c.EtcdMembers(pctx)

	cancel()

	switch {
	case err == nil && len(members) > 0:
		return false, nil
	case err != nil && errors.Is(err, ErrTrust):
		return false, fmt.Errorf("bootstrap: check etcd first: %w", err)
	case err != nil && ctx.Err() != nil:
		return false, fmt.Errorf("bootstrap: check etcd first: %w", err)
	}

	err = c.c.Bootstrap(ctx, &machine.BootstrapRequest{})

	switch {
	case err == nil:
		return true, nil
	case client.StatusCode(err) == codes.AlreadyExists:
		return false, nil
	default:
		return false, c.wrap("bootstrap etcd", err)
	}
}

// IsBootstrapNotReady tells whether Bootstrap failed only because the node
// is not ready for it yet (machined: FailedPrecondition "bootstrap is not
// available yet" or "time is not in sync yet"); waiting fixes it.
func IsBootstrapNotReady(err error) bool {
	if client.StatusCode(err) != codes.FailedPrecondition {
		return false
	}

	msg := err.Error()

	return strings.Contains(msg, "bootstrap is not available yet") || strings.Contains(msg, "time is not in sync yet")
}

// Kubeconfig fetches an admin kubeconfig from a control plane.
func (c *Client) Kubeconfig(ctx context.Context) ([]byte, error) {
	kc, err := c.c.Kubeconfig(ctx)
	if err != nil {
		return nil, c.wrap("fetch kubeconfig", err)
	}

	if len(kc) == 0 {
		return nil, fmt.Errorf("fetch kubeconfig from %s: the node sent an empty kubeconfig", c.endpoint)
	}

	return kc, nil
}

// Links lists the node's network links, in the order Talos lists them.
func (c *Client) Links(ctx context.Context) ([]Link, error) {
	return listStatus(ctx, c, "links", func(l *network.LinkStatus) (Link, bool) {
		spec := l.TypedSpec()
		return Link{
			Name:         l.Metadata().ID(),
			Up:           spec.Flags&nethelpers.LinkFlags(nethelpers.LinkUp) != 0 && spec.OperationalState != nethelpers.OperStateDown,
			MTU:          int(spec.MTU),
			HardwareAddr: spec.HardwareAddr.String(),
		}, true
	})
}

// Addresses lists the addresses assigned to the node's links.
func (c *Client) Addresses(ctx context.Context) ([]Address, error) {
	return listStatus(ctx, c, "addresses", func(a *network.AddressStatus) (Address, bool) {
		spec := a.TypedSpec()
		return Address{Link: spec.LinkName, CIDR: spec.Address.String()}, true
	})
}

// listStatus lists the node's resources of type R (such as
// network.LinkStatus) through COSI, in the order Talos lists them, and
// keeps what conv returns with true; what names them in the error.
func listStatus[R meta.ResourceWithRD, T any](ctx context.Context, c *Client, what string, conv func(R) (T, bool)) ([]T, error) {
	list, err := safe.StateListAll[R](ctx, c.c.COSI)
	if err != nil {
		return nil, c.wrap("list "+what, err)
	}

	out := make([]T, 0, list.Len())

	for r := range list.All() {
		if v, ok := conv(r); ok {
			out = append(out, v)
		}
	}

	return out, nil
}

// ApplyConfig applies a machine config in AUTO mode (Talos reboots only when
// the change needs it).
func (c *Client) ApplyConfig(ctx context.Context, cfg []byte) error {
	return c.applyConfig(ctx, cfg, machine.ApplyConfigurationRequest_AUTO, "apply machine config")
}

// applyConfig sends cfg in mode; what names the call in the error.
func (c *Client) applyConfig(ctx context.Context, cfg []byte, mode machine.ApplyConfigurationRequest_Mode, what string) error {
	_, err := c.c.ApplyConfiguration(ctx, &machine.ApplyConfigurationRequest{
		Data: cfg,
		Mode: mode,
	})
	if err != nil {
		return c.wrap(what, err)
	}

	return nil
}

// EtcdSnapshot streams an etcd snapshot into w and returns its size. The
// trailing SHA-256 etcd appends to a snapshot is checked, so a stream cut
// short is an error, not a silently truncated backup.
func (c *Client) EtcdSnapshot(ctx context.Context, w io.Writer) (int64, error) {
	r, err := c.c.EtcdSnapshot(ctx, &machine.EtcdSnapshotRequest{})
	if err != nil {
		return 0, c.wrap("take etcd snapshot", err)
	}
	defer r.Close() //nolint:errcheck // read side of a pipe

	hw := newHashTailWriter(w)

	n, err := io.Copy(hw, r)
	if err != nil {
		return n, c.wrap("take etcd snapshot", err)
	}

	// The machinery stream reader ends quietly on Canceled/DeadlineExceeded.
	if ctx.Err() != nil {
		return n, fmt.Errorf("take etcd snapshot at %s: %w after %d bytes; retry with a longer timeout", c.endpoint, ctx.Err(), n)
	}

	if err := hw.verify(); err != nil {
		return n, fmt.Errorf("take etcd snapshot at %s: %w; the stream was cut or corrupted, take it again", c.endpoint, err)
	}

	return n, nil
}
