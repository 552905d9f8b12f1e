package steps

import (
	"context"
	"fmt"
	"sort"

	"github.com/hetznercloud/hcloud-go/v2/hcloud"

	"github.com/ohmytalos/ohmytalos/internal/engine"
	"github.com/ohmytalos/ohmytalos/internal/imaging"
	"github.com/ohmytalos/ohmytalos/internal/myip"
	"github.com/ohmytalos/ohmytalos/internal/pricing"
	"github.com/ohmytalos/ohmytalos/internal/spec"
)

// snapshotFindings looks up the snapshot every pool needs for its
// architecture: a missing one is built by the images step on a temporary
// server of the cheapest orderable type of that architecture in the
// spec's location, which must exist. builds is how many will be built.
func (d *Deps) snapshotFindings(ctx context.Context, c *hcloud.Client, sp *spec.Spec, cat *pricing.Catalog) (fs []Finding, builds int, err error) {
	needs, _, err := imageNeeds(sp)
	if err != nil {
		return nil, 0, err
	}
	b := imaging.New(c, imaging.Options{})
	for _, n := range needs {
		field := "schematics." + n.schematic
		name := fmt.Sprintf("talos-%s-%s-%s", n.key.TalosVersion, n.schematic, n.key.Arch)
		img, err := b.Find(ctx, n.key)
		if err != nil {
			fs = append(fs, Finding{Check: CheckSnapshots, Severity: SeverityError, Field: field, Reason: err.Error(),
				Fix: "delete the extra snapshots so that one is left"})
			continue
		}
		if img != nil {
			continue
		}
		builds++
		builder := cheapestOrderable(cat, n.key.Arch, sp.Location)
		if builder == "" {
			fs = append(fs, Finding{Check: CheckSnapshots, Severity: SeverityError, Field: "location",
				Reason: fmt.Sprintf("snapshot %s does not exist, and no %s server type is orderable in %s to build it on", name, n.key.Arch, sp.Location),
				Fix:    fmt.Sprintf("set location to one where %s types are orderable (%s), or build the snapshot there first", n.key.Arch, orderableLocations(cat, n.key.Arch))})
			continue
		}
		fs = append(fs, Finding{Check: CheckSnapshots, Severity: SeverityNote, Field: field,
			Reason: fmt.Sprintf("snapshot %s (%s) does not exist yet: the images step builds it on a temporary %s in %s", name, n.key.Arch, builder, sp.Location)})
	}
	return fs, builds, nil
}

// cheapestOrderable is the cheapest non-deprecated type of a Talos
// architecture orderable in location, or "".
func cheapestOrderable(cat *pricing.Catalog, arch, location string) string {
	best := ""
	for name, st := range cat.ServerTypes {
		if st.Deprecated || !st.Available[location] || cat.CheckServerType(name, location, arch) != nil {
			continue
		}
		if best == "" || st.Prices[location].Monthly < cat.ServerTypes[best].Prices[location].Monthly ||
			(st.Prices[location].Monthly == cat.ServerTypes[best].Prices[location].Monthly && name < best) {
			best = name
		}
	}
	return best
}

// orderableLocations lists where some type of arch can be ordered.
func orderableLocations(cat *pricing.Catalog, arch string) string {
	var out []string
	for _, loc := range cat.Locations() {
		if cheapestOrderable(cat, arch, loc) != "" {
			out = append(out, loc)
		}
	}
	if len(out) == 0 {
		return "none today"
	}
	sort.Strings(out)
	return fmt.Sprint(out)
}

// reachFindings checks that this machine reaches the Talos (50000) and
// Kubernetes (6443) APIs through the firewall the plan sets. The verdict
// is lockedOut's, the one apply's pools step refuses by, so pre-flight and
// apply agree on which of the operator's addresses must be admitted. In
// endpoint.mode loadbalancer too: bootstrap dials every node's own public
// address, which the firewall filters.
func (d *Deps) reachFindings(ctx context.Context, env *engine.Env) []Finding {
	sp := env.Spec
	src, err := d.firewallSources(ctx, env)
	if err != nil {
		return []Finding{{Check: CheckReach, Severity: SeverityError, Field: "firewall.allow",
			Reason: "your address could not be detected, so the firewall would admit no one to the Talos and Kubernetes APIs: " + err.Error(),
			Fix: fmt.Sprintf("check this machine's internet access (or firewall.ipEchoURL), name your address with %s (or %s), or list the ranges in firewall.allow",
				myip.OperatorFlag, myip.OperatorKey)}}
	}
	var fs []Finding
	if src.Stale != nil {
		fs = append(fs, Finding{Check: CheckReach, Severity: SeverityWarning, Field: "firewall.allow",
			Reason: fmt.Sprintf("your address could not be detected (%v); the firewall keeps %v from the last run", src.Stale, src.CIDRs),
			Fix:    "if your address changed, run apply again once it can be detected, or name it with " + myip.OperatorFlag})
	}
	l := d.lockedOut(ctx, sp, src)
	if l == nil {
		return fs
	}
	// --allow-lockout (another machine, a VPN or a bastion reaches the
	// nodes) turns the refusal into a warning; apply's pools step warns again.
	sev := SeverityError
	if d.AllowLockout {
		sev = SeverityWarning
	}
	var reason string
	switch {
	case l.Unknown != nil:
		reason = fmt.Sprintf("your address could not be detected (%s), and the firewall will admit only %v to ports 50000 (Talos) and 6443 (Kubernetes): apply might lock this machine out",
			l.unknownCause(), src.CIDRs)
	case l.Foreign != "":
		reason = fmt.Sprintf("your address %s has no family the servers' public addresses have, so this machine cannot reach the Talos and Kubernetes APIs", l.Foreign)
	default:
		reason = fmt.Sprintf("the firewall will admit %v to ports 50000 (Talos) and 6443 (Kubernetes) and does not admit your address %v: apply %s lock this machine out",
			src.CIDRs, l.Outside, l.would())
		if len(l.Inside) > 0 {
			reason += fmt.Sprintf(" (it admits %v, but this machine, kubectl or talosctl may connect over the other family)", l.Inside)
		}
	}
	return append(fs, Finding{Check: CheckReach, Severity: sev, Field: l.field(), Reason: reason,
		Fix: l.fix() + "; if another machine or a VPN reaches the nodes, run apply with --allow-lockout"})
}
