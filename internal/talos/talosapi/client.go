// Package talosapi holds the Talos API operations ohmytalos performs on a
// node, through the real machinery client (github.com/siderolabs/talos/pkg/machinery/client):
// waiting for the API, bootstrapping etcd exactly once, fetching the
// kubeconfig, reading links and addresses from the COSI state, applying a
// config and taking an etcd snapshot.
//
// Errors are classified the way talosctl's bootstrap conditions do: a node
// that is still booting (Unavailable, connection refused, deadline) is worth
// waiting for; a TLS or authorization failure will not heal by itself and is
// reported at once with what to fix.
package talosapi

import (
	"context"
	"errors"
	"fmt"
	"net"
	"time"

	"github.com/siderolabs/talos/pkg/machinery/client"
	clientconfig "github.com/siderolabs/talos/pkg/machinery/client/config"
	"google.golang.org/grpc"
	"google.golang.org/grpc/backoff"
)

// Client is a connection to one Talos node's API.
type Client struct {
	endpoint string
	c        *client.Client
}

// bootConnectParams keep reconnects frequent while a node boots. gRPC's
// default backoff grows to two minutes (grpc-go backoff.DefaultConfig:
// MaxDelay 120s), far longer than a Talos boot: a node that came up 80 s
// after power on was only reached 30-45 s later.
var bootConnectParams = grpc.ConnectParams{
	Backoff:           backoff.Config{BaseDelay: 250 * time.Millisecond, Multiplier: 1.6, Jitter: 0.2, MaxDelay: 500 * time.Millisecond},
	MinConnectTimeout: 5 * time.Second,
}

// Connect opens a client for the node at endpoint ("ip" or "ip:port"; the
// default port is 50000) with the credentials of a talosconfig. It does not
// dial: the first call (or WaitReady) does.
func Connect(ctx context.Context, talosconfig []byte, endpoint string) (*Client, error) {
	if endpoint == "" {
		return nil, errors.New("connect to Talos API: no endpoint given; pass the node's public IP")
	}

	cfg, err := clientconfig.FromBytes(talosconfig)
	if err != nil {
		return nil, fmt.Errorf("connect to Talos API at %s: read talosconfig: %w; regenerate it from the cluster's secrets bundle", endpoint, err)
	}

	c, err := client.New(ctx, client.WithConfig(cfg), client.WithEndpoints(endpoint),
		client.WithGRPCDialOptions(grpc.WithConnectParams(bootConnectParams)))
	if err != nil {
		return nil, fmt.Errorf("connect to Talos API at %s: %w", endpoint, err)
	}

	return &Client{endpoint: endpoint, c: c}, nil
}

// Close releases the connection.
func (c *Client) Close() error {
	if err := c.c.Close(); err != nil {
		return fmt.Errorf("close Talos API connection to %s: %w", c.endpoint, err)
	}

	return nil
}

// Endpoint is the address the client talks to.
func (c *Client) Endpoint() string { return c.endpoint }

// Version returns the node's Talos version tag (e.g. "v1.13.9").
func (c *Client) Version(ctx context.Context) (string, error) {
	resp, err := c.c.Version(ctx)
	if err != nil {
		return "", c.wrap("read Talos version", err)
	}

	for _, m := range resp.GetMessages() {
		if tag := m.GetVersion().GetTag(); tag != "" {
			return tag, nil
		}
	}

	return "", fmt.Errorf("read Talos version from %s: the node answered without a version", c.endpoint)
}

// WaitReady polls Version with exponential backoff until the node answers,
// ctx ends, or an error that waiting cannot fix (TLS, authorization) occurs.
func (c *Client) WaitReady(ctx context.Context) error {
	return c.WaitReadyReporting(ctx, 0, nil)
}

// WaitReadyReporting is WaitReady that calls report with how long it has
// waited and the last error, after the first failed attempt and then at
// most every interval while the node does not answer, so a long wait is
// never silent. The error when ctx ends names the endpoint and port and
// the last error seen.
func (c *Client) WaitReadyReporting(ctx context.Context, every time.Duration, report func(waited time.Duration, last error)) error {
	const (
		first = 100 * time.Millisecond
		// limit is how late a node that came up is noticed at most: the
		// first control plane's answer starts etcd's bootstrap.
		limit = 500 * time.Millisecond
		// attempt bounds one Version call: when the node rejects the client
		// certificate after a TLS 1.3 handshake, gRPC only reports it (as
		// Unavailable "remote error: tls: ...") once the call's deadline ends.
		attempt = 5 * time.Second
	)

	delay := first
	start := time.Now()

	var reported time.Time

	for {
		callCtx, cancel := context.WithTimeout(ctx, attempt)
		_, err := c.Version(callCtx)

		cancel()

		if err == nil {
			return nil
		}

		if !IsRetryable(err) {
			return err
		}

		if report != nil && (reported.IsZero() || time.Since(reported) >= every) {
			report(time.Since(start).Round(time.Second), err)
			reported = time.Now()
		}

		t := time.NewTimer(delay)
		select {
		case <-ctx.Done():
			t.Stop()

			return fmt.Errorf("wait for Talos API at %s: no answer after %s: %w (last error: %w)",
				c.address(), time.Since(start).Round(time.Second), ctx.Err(), err)
		case <-t.C:
		}

		delay = min(delay*2, limit)
	}
}

// address is the endpoint with its port (50000 when the endpoint has none).
func (c *Client) address() string {
	if _, _, err := net.SplitHostPort(c.endpoint); err == nil {
		return c.endpoint
	}

	return net.JoinHostPort(c.endpoint, "50000")
}
