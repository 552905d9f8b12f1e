// Package steps holds the provisioning steps, headless: secrets, images,
// network, pools, configs, servers and bootstrap. Each is an engine.Step
// that looks resources up before creating them, so re-running is safe.
package steps

import (
	"log/slog"
	"strings"
	"sync"

	"github.com/ohmytalos/ohmytalos/internal/engine"
)

// Deps are the clients and settings the steps share.
type Deps struct {
	Log     *slog.Logger
	Sandbox bool

	mu      sync.Mutex
	secrets []string // looked-up secret values, for redaction
}

// Redact replaces every looked-up secret value in s.
func (d *Deps) Redact(s string) string {
	d.mu.Lock()
	defer d.mu.Unlock()
	for _, v := range d.secrets {
		if v != "" {
			s = strings.ReplaceAll(s, v, "[redacted]")
		}
	}
	return s
}

// All returns the steps in order.
func All(d *Deps) []engine.Step {
	return nil
}
