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

// neededImage is one Talos snapshot the spec's nodes boot from.
type neededImage struct {
	Schematic, Arch, TalosVersion string
}

func (n neededImage) String() string { return n.Schematic + "-" + n.Arch }

// neededImages lists the snapshots the nodes need, control planes first,
// one per schematic and architecture.
func neededImages(s *spec.Spec) []neededImage {
	var out []neededImage
	seen := map[string]bool{}
	for _, n := range s.Nodes() {
		name, _ := s.SchematicFor(n.Pool)
		im := neededImage{Schematic: name, Arch: spec.Arch(n.ServerType), TalosVersion: s.Talos.Version}
		if !seen[im.String()] {
			seen[im.String()] = true
			out = append(out, im)
		}
	}
	return out
}
