package ui

import (
	"github.com/ohmytalos/ohmytalos/internal/netplan"
	"github.com/ohmytalos/ohmytalos/internal/pricing"
	"github.com/ohmytalos/ohmytalos/internal/spec"
)

// DefaultAdapt turns a spec into the netplan layout (with spec field paths,
// so findings land beside the right input) and the pricing usage, with the
// spec's own adapters.
func DefaultAdapt(s *spec.Spec) (netplan.Layout, pricing.Usage) {
	return s.Layout(), s.Usage()
}

// neededImages lists the snapshots the nodes need, control planes first,
// one per schematic and architecture.
func neededImages(s *spec.Spec) []spec.Image { return s.Images() }
