package doctor

import (
	"context"
	"fmt"
	"strings"
)

// Snapshot labels the images check reads (field notes: snapshots are
// labelled os, version, arch and name so they can be found again). Hetzner
// label values hold at most 63 characters, so the 64-digit schematic ID is
// matched by a prefix of at least MinSchematicPrefix digits in the label, or
// in full in the description.
const (
	LabelOS            = "os"
	LabelTalosVersion  = "version"
	LabelArch          = "arch"
	LabelSchematic     = "schematic"
	MinSchematicPrefix = 12
)

func normArch(a string) string {
	switch strings.ToLower(a) {
	case "amd64", "x86", "x86_64":
		return "amd64"
	case "arm64", "arm", "aarch64":
		return "arm64"
	}
	return strings.ToLower(a)
}

func normVersion(v string) string { return strings.TrimPrefix(strings.TrimSpace(v), "v") }

func snapshotMatches(s Snapshot, k ImageKey) bool {
	arch := s.Labels[LabelArch]
	if arch == "" {
		arch = s.Architecture
	}
	if normArch(arch) != normArch(k.Arch) {
		return false
	}
	if normVersion(s.Labels[LabelTalosVersion]) != normVersion(k.TalosVersion) {
		return false
	}
	if k.SchematicID == "" {
		return true
	}
	if l := s.Labels[LabelSchematic]; len(l) >= MinSchematicPrefix && strings.HasPrefix(k.SchematicID, l) {
		return true
	}
	return strings.Contains(s.Description, k.SchematicID)
}

// checkImages verifies that a Talos snapshot exists for every pool's
// architecture, Talos version and schematic: a server created from a missing
// or wrong snapshot never boots Talos, or boots without its extensions.
func checkImages(ctx context.Context, env *Env) Result {
	if env.Cloud == nil {
		return skip(noCloud)
	}
	if len(env.ExpectedImages) == 0 {
		return skip("no expected images given")
	}
	snaps, err := env.Cloud.Snapshots(ctx)
	if err != nil {
		return sourceError("the Hetzner snapshots", err)
	}
	var missing, evidence []string
	seen := map[ImageKey]bool{}
	for _, k := range env.ExpectedImages {
		if seen[k] {
			continue
		}
		seen[k] = true
		found := false
		for _, s := range snaps {
			if snapshotMatches(s, k) {
				evidence = append(evidence, fmt.Sprintf("%s %s schematic %s: snapshot %d", k.Arch, k.TalosVersion, shortID(k.SchematicID), s.ID))
				found = true
				break
			}
		}
		if !found {
			missing = append(missing, fmt.Sprintf("%s %s schematic %s: no snapshot", k.Arch, k.TalosVersion, shortID(k.SchematicID)))
		}
	}
	evidence = append(evidence, fmt.Sprintf("%d snapshot(s) in the project", len(snaps)))
	if len(missing) > 0 {
		return Result{Status: StatusFail, Evidence: append(missing, evidence...),
			Explanation: fmt.Sprintf("Hetzner cannot boot a Talos image directly: every pool needs a snapshot built for its architecture, Talos version and schematic "+
				"(labelled %s=talos, %s, %s and %s). Without it, new servers of that pool cannot be created, or boot without their system extensions.",
				LabelOS, LabelTalosVersion, LabelArch, LabelSchematic),
			Fix: "build the missing snapshots (ohmytalos apply runs the images step; it builds them in parallel), or correct the pool's architecture, Talos version or schematic in the spec"}
	}
	return pass(evidence...)
}

func shortID(id string) string {
	if len(id) > MinSchematicPrefix {
		return id[:MinSchematicPrefix]
	}
	return id
}
