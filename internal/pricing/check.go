package pricing

import (
	"fmt"
	"math"
	"sort"
	"strings"

	"github.com/agnivade/levenshtein"
)

// ServerTypeError says why a server type cannot be used for a pool and what
// to use instead; Error() reads as one operator-facing sentence.
type ServerTypeError struct {
	// Name and Location are what was asked for.
	Name, Location string
	// Reason says what is wrong, e.g. "is not orderable in nbg1".
	Reason string
	// Alternative is the nearest orderable type, or "" when there is none.
	Alternative string
	// Fix is the advice shown after the reason.
	Fix string
}

// Error implements error.
func (e *ServerTypeError) Error() string {
	return fmt.Sprintf("server type %s %s; %s", e.Name, e.Reason, e.Fix)
}

// Arch returns the Talos architecture of a server type: "amd64" or "arm64".
func (c *Catalog) Arch(serverType string) (string, error) {
	st, ok := c.ServerTypes[serverType]
	if !ok {
		return "", c.unknownType(serverType, "")
	}
	switch st.Architecture {
	case "x86":
		return "amd64", nil
	case "arm":
		return "arm64", nil
	}
	return "", fmt.Errorf("server type %s has unknown architecture %q; refresh the prices from the Hetzner API or pick a cpx/cx/ccx (amd64) or cax (arm64) type", serverType, st.Architecture)
}

// CheckServerType checks that name can be ordered in location with the given
// architecture ("amd64"/"x86", "arm64"/"arm", or "" for any). A failure is a
// *ServerTypeError naming the nearest orderable alternative by architecture,
// memory and cores.
func (c *Catalog) CheckServerType(name, location, arch string) error {
	want := ""
	if arch != "" {
		var ok bool
		if want, ok = apiArch(arch); !ok {
			return fmt.Errorf("architecture %q is not one Hetzner offers; use amd64 or arm64", arch)
		}
	}
	st, ok := c.ServerTypes[name]
	if !ok {
		return c.unknownType(name, location)
	}
	if !c.knownLocation(location) {
		return &ServerTypeError{Name: name, Location: location,
			Reason: fmt.Sprintf("cannot be placed in %q, which is not a Hetzner location", location),
			Fix:    "use one of " + strings.Join(c.Locations(), ", ")}
	}
	if want != "" && st.Architecture != want {
		alt := c.Nearest(st, location, want)
		return c.typeError(st, location, alt,
			fmt.Sprintf("is %s, but the pool needs %s", talosArch(st.Architecture), talosArch(want)))
	}
	if st.Deprecated {
		reason := "is deprecated by Hetzner"
		if st.Deprecation != nil {
			reason += " (" + st.Deprecation.String() + ")"
		}
		return c.typeError(st, location, c.Nearest(st, location, st.Architecture), reason)
	}
	if !st.Available[location] {
		reason := "is not orderable in " + location
		if d, ok := st.LocationDeprecations[location]; ok {
			reason += " (deprecated there: " + d.String() + ")"
		}
		return c.typeError(st, location, c.Nearest(st, location, st.Architecture), reason)
	}
	return nil
}

// typeError builds the error for a type that exists but cannot be used.
func (c *Catalog) typeError(st ServerType, location, alt, reason string) *ServerTypeError {
	e := &ServerTypeError{Name: st.Name, Location: location, Reason: reason, Alternative: alt}
	if alt != "" {
		a := c.ServerTypes[alt]
		e.Fix = fmt.Sprintf("try %s (%d vCPU, %g GB RAM, %s EUR/month in %s)", alt, a.Cores, a.MemoryGB, a.Prices[location].Monthly, location)
	} else {
		e.Fix = "no comparable type is orderable in " + location + "; pick another location"
	}
	if elsewhere := orderableIn(st); len(elsewhere) > 0 && !st.Available[location] && !st.Deprecated {
		e.Fix += fmt.Sprintf(", or keep %s in %s", st.Name, strings.Join(elsewhere, "/"))
	}
	return e
}

// unknownType reports a type name the catalog does not know, with the
// closest names.
func (c *Catalog) unknownType(name, location string) error {
	names := make([]string, 0, len(c.ServerTypes))
	for n, st := range c.ServerTypes {
		if !st.Deprecated {
			names = append(names, n)
		}
	}
	sort.Slice(names, func(i, j int) bool {
		di, dj := levenshtein.ComputeDistance(name, names[i]), levenshtein.ComputeDistance(name, names[j])
		if di != dj {
			return di < dj
		}
		return names[i] < names[j]
	})
	if len(names) > 3 {
		names = names[:3]
	}
	fix := "pick a server type from the price list"
	if len(names) > 0 {
		fix = "did you mean " + strings.Join(names, ", ") + "?"
	}
	return &ServerTypeError{Name: name, Location: location, Reason: "does not exist at Hetzner", Fix: fix}
}

// Nearest returns the orderable, non-deprecated type in location with
// architecture arch ("x86" or "arm") closest to like: types with at least
// like's memory and cores first, then the smallest memory and core
// difference, then the lower price. It returns "" when none is orderable.
func (c *Catalog) Nearest(like ServerType, location, arch string) string {
	type cand struct {
		name         string
		under        bool
		dMem, dCores float64
		monthly      Money
	}
	var cands []cand
	for name, st := range c.ServerTypes {
		if name == like.Name || st.Deprecated || !st.Available[location] || st.Architecture != arch {
			continue
		}
		cands = append(cands, cand{
			name:    name,
			under:   st.MemoryGB < like.MemoryGB || st.Cores < like.Cores,
			dMem:    math.Abs(st.MemoryGB - like.MemoryGB),
			dCores:  math.Abs(float64(st.Cores - like.Cores)),
			monthly: st.Prices[location].Monthly,
		})
	}
	if len(cands) == 0 {
		return ""
	}
	sort.Slice(cands, func(i, j int) bool {
		a, b := cands[i], cands[j]
		switch {
		case a.under != b.under:
			return !a.under
		case a.dMem != b.dMem:
			return a.dMem < b.dMem
		case a.dCores != b.dCores:
			return a.dCores < b.dCores
		case a.monthly != b.monthly:
			return a.monthly < b.monthly
		}
		return a.name < b.name
	})
	return cands[0].name
}

// knownLocation reports whether any server type is priced in location.
func (c *Catalog) knownLocation(location string) bool {
	for _, st := range c.ServerTypes {
		if _, ok := st.Prices[location]; ok {
			return true
		}
	}
	return false
}

// orderableIn returns the sorted locations where st can be ordered.
func orderableIn(st ServerType) []string {
	var out []string
	for loc, ok := range st.Available {
		if ok {
			out = append(out, loc)
		}
	}
	sort.Strings(out)
	return out
}

// apiArch maps an architecture as operators write it to the API's spelling.
func apiArch(arch string) (string, bool) {
	switch strings.ToLower(arch) {
	case "amd64", "x86", "x86_64":
		return "x86", true
	case "arm64", "arm", "aarch64":
		return "arm", true
	}
	return "", false
}

// talosArch maps the API's architecture to Talos' spelling.
func talosArch(arch string) string {
	switch arch {
	case "x86":
		return "amd64"
	case "arm":
		return "arm64"
	}
	return arch
}
