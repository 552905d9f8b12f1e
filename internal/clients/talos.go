package clients

import (
	"context"

	"github.com/ohmytalos/ohmytalos/internal/talos/talosapi"
)

// Talos connects to one node's Talos API with a talosconfig (the
// cluster's, from its state).
func (c *Set) Talos(ctx context.Context, talosconfig []byte, ip string) (*talosapi.Client, error) {
	return talosapi.Connect(ctx, talosconfig, ip)
}
