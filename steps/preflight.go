package steps

import (
	"errors"
	"fmt"

	"github.com/ohmytalos/ohmytalos/internal/pricing"
	"github.com/ohmytalos/ohmytalos/internal/spec"
)

// CheckServerTypes checks every pool's server type against the catalog
// (live from the API, or the offline price list): unknown, deprecated, not
// orderable in its location, or of the wrong architecture for its image is
// a problem naming the nearest orderable alternative.
func CheckServerTypes(sp *spec.Spec, cat *pricing.Catalog) spec.Problems {
	var ps spec.Problems
	check := func(field, typ, loc string) {
		err := cat.CheckServerType(typ, loc, spec.Arch(typ))
		if err == nil {
			return
		}
		p := spec.Problem{Field: field, Reason: err.Error()}
		var ste *pricing.ServerTypeError
		if errors.As(err, &ste) {
			p.Reason = fmt.Sprintf("%s %s", ste.Name, ste.Reason)
			p.Fix = ste.Fix
			if ste.Alternative != "" && p.Fix == "" {
				p.Fix = "use " + ste.Alternative
			}
		}
		ps = append(ps, p)
	}
	check("controlPlane.serverType", sp.ControlPlane.ServerType, sp.ControlPlane.Location)
	for i, p := range sp.Pools {
		check(fmt.Sprintf("pools[%d].serverType", i), p.ServerType, p.Location)
	}
	if _, ok := cat.LoadBalancerTypes[sp.LoadBalancer.Type]; !ok && len(cat.LoadBalancerTypes) > 0 {
		ps = append(ps, spec.Problem{Field: "loadBalancer.type", Reason: sp.LoadBalancer.Type + " is not in the price list", Fix: "use lb11, lb21 or lb31"})
	}
	return ps
}
