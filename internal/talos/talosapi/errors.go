package talosapi

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/siderolabs/talos/pkg/machinery/client"
	"google.golang.org/grpc/codes"
)

// ErrTrust marks failures of the TLS handshake or of authorization: the
// talosconfig does not belong to this cluster (or lacks the role), and
// retrying will not help.
var ErrTrust = errors.New("talos API does not trust these credentials")

// IsRetryable tells whether waiting may fix err: the node is booting or
// unreachable for now (Unavailable, connection refused, DeadlineExceeded).
// TLS and authorization failures are not retryable.
func IsRetryable(err error) bool {
	if err == nil {
		return false
	}

	if errors.Is(err, ErrTrust) {
		return false
	}

	if errors.Is(err, context.DeadlineExceeded) {
		return true
	}

	if errors.Is(err, context.Canceled) {
		return false
	}

	msg := err.Error()

	if isTrustMessage(msg) {
		return false
	}

	if IsBootstrapNotReady(err) {
		return true
	}

	switch client.StatusCode(err) {
	case codes.Unavailable, codes.DeadlineExceeded, codes.Aborted, codes.ResourceExhausted:
		return true
	case codes.PermissionDenied, codes.Unauthenticated, codes.InvalidArgument, codes.Unimplemented:
		return false
	}

	return strings.Contains(msg, "connection refused") || strings.Contains(msg, "connection reset") ||
		strings.Contains(msg, "i/o timeout") || strings.Contains(msg, "no route to host")
}

func isTrustMessage(msg string) bool {
	// A worker whose control plane is not up yet fails the handshake with a
	// server-side "internal error": that one heals.
	if strings.Contains(msg, "tls: internal error") {
		return false
	}

	// Fragments of crypto/tls and crypto/x509 errors, as gRPC reports them
	// inside an Unavailable status ("authentication handshake failed: ...",
	// "remote error: tls: unknown certificate authority").
	for _, m := range []string{
		"x509:",
		"certificate signed by unknown authority",
		"unknown certificate authority",
		"bad certificate",
		"certificate required",
		"certificate is valid for",
	} {
		if strings.Contains(msg, m) {
			return true
		}
	}

	return false
}

// wrap adds the operation and the endpoint to err and, for trust failures,
// what the operator has to do.
func (c *Client) wrap(op string, err error) error {
	msg := err.Error()

	switch {
	case isTrustMessage(msg):
		return fmt.Errorf("%s at %s: %w: TLS handshake failed (%w); the talosconfig was not generated from this cluster's secrets bundle, use the one saved for this cluster",
			op, c.endpoint, ErrTrust, err)
	case client.StatusCode(err) == codes.PermissionDenied || client.StatusCode(err) == codes.Unauthenticated:
		return fmt.Errorf("%s at %s: %w: the node refused the call (%w); use a talosconfig with the os:admin role",
			op, c.endpoint, ErrTrust, err)
	}

	return fmt.Errorf("%s at %s: %w", op, c.endpoint, err)
}
