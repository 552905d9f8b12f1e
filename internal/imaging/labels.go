package imaging

import (
	"github.com/ohmytalos/ohmytalos/internal/cloud"

	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"regexp"
	"strings"
)

// Key identifies one Talos snapshot: the same schematic, Talos version and
// architecture always give the same disk, so one snapshot per key suffices.
type Key struct {
	// SchematicID is the Image Factory schematic ID (64 hex characters).
	SchematicID string
	// TalosVersion is the Talos release, e.g. "v1.13.9".
	TalosVersion string
	// Arch is "amd64" or "arm64".
	Arch string
}

// String renders the key for messages: "v1.13.9/amd64/3765679…".
func (k Key) String() string {
	id := k.SchematicID
	if len(id) > 12 {
		id = id[:12] + "…"
	}
	return k.TalosVersion + "/" + k.Arch + "/" + id
}

// Label keys. os, version and arch follow the convention of the Talos
// documentation and the community Terraform modules for Hetzner, so snapshots
// built elsewhere with the same labels are recognisable (but only reused when
// the schematic matches, see Find).
const (
	LabelOS         = "os"
	LabelVersion    = "version"
	LabelArch       = "arch"
	LabelName       = "name"
	LabelSchematic  = "ohmytalos.io/schematic"
	LabelManagedBy  = cloud.LabelManagedBy
	LabelTemporary  = "ohmytalos.io/temporary"
	LabelPurpose    = "ohmytalos.io/purpose"
	LabelBuildKey   = "ohmytalos.io/image-key"
	managedByValue  = cloud.ManagedBy
	purposeValue    = "image-build"
	maxLabelValue   = 63 // Hetzner: label values are at most 63 characters
	descriptionHead = "Talos "
)

var (
	schematicPattern = regexp.MustCompile(`^[0-9a-f]{64}$`)
	versionPattern   = regexp.MustCompile(`^v[0-9]+\.[0-9]+\.[0-9]+([-.][0-9A-Za-z.-]+)?$`)
)

// validate checks a key before it is used in labels and URLs.
func (k Key) validate() error {
	if !schematicPattern.MatchString(k.SchematicID) {
		return fmt.Errorf("schematic ID %q is not 64 lowercase hex characters; compute it with the factory package or take it from POST /schematics", k.SchematicID)
	}
	if !versionPattern.MatchString(k.TalosVersion) || len(k.TalosVersion) > maxLabelValue {
		return fmt.Errorf("talos version %q is not a release tag such as v1.13.9", k.TalosVersion)
	}
	if k.Arch != "amd64" && k.Arch != "arm64" {
		return fmt.Errorf("architecture %q is not supported on Hetzner Cloud; use amd64 or arm64", k.Arch)
	}
	return nil
}

// Labels returns the labels that identify the snapshot of k. A schematic ID
// has 64 characters but Hetzner label values at most 63, so the label holds
// the first 63 and the description holds the full ID; Find checks both.
func Labels(k Key) map[string]string {
	return map[string]string{
		LabelOS:        "talos",
		LabelVersion:   k.TalosVersion,
		LabelArch:      k.Arch,
		LabelName:      snapshotName(k),
		LabelSchematic: prefix(k.SchematicID, maxLabelValue),
		LabelManagedBy: managedByValue,
	}
}

// Description is the snapshot description: it carries the full schematic ID.
func Description(k Key) string {
	return fmt.Sprintf("%s%s %s schematic %s", descriptionHead, k.TalosVersion, k.Arch, k.SchematicID)
}

// descriptionSchematic extracts the full schematic ID from a description
// written by Description.
func descriptionSchematic(desc string) string {
	_, after, ok := strings.Cut(desc, " schematic ")
	if !ok {
		return ""
	}
	return strings.Fields(after + " ")[0]
}

func snapshotName(k Key) string {
	return prefix(fmt.Sprintf("talos-%s-%s-%s", k.TalosVersion, k.Arch, prefix(k.SchematicID, 8)), maxLabelValue)
}

// buildKey is a short, label-safe digest of k that tags a build's temporary
// resources, so an interrupted build of the same key can find and remove
// its own leftovers.
func buildKey(k Key) string {
	sum := sha256.Sum256([]byte(k.SchematicID + "\x00" + k.TalosVersion + "\x00" + k.Arch))
	return hex.EncodeToString(sum[:])[:16]
}

// temporaryLabels labels the throwaway SSH key, server and unfinished image.
func (b *Builder) temporaryLabels(k Key) map[string]string {
	l := map[string]string{}
	for name, v := range b.opts.Labels {
		l[name] = v
	}
	l[LabelManagedBy] = managedByValue
	l[LabelTemporary] = "true"
	l[LabelPurpose] = purposeValue
	l[LabelBuildKey] = buildKey(k)
	return l
}

// finalLabels are the labels of a finished snapshot: the caller's extra
// labels, overridden by Labels(k).
func (b *Builder) finalLabels(k Key) map[string]string {
	l := map[string]string{}
	for name, v := range b.opts.Labels {
		l[name] = v
	}
	for name, v := range Labels(k) {
		l[name] = v
	}
	return l
}

// selector renders labels as an AND label selector, in a stable order.
func selector(pairs ...string) string {
	var parts []string
	for i := 0; i+1 < len(pairs); i += 2 {
		parts = append(parts, pairs[i]+"="+pairs[i+1])
	}
	return strings.Join(parts, ",")
}

func findSelector(k Key) string {
	return selector(LabelOS, "talos", LabelVersion, k.TalosVersion, LabelArch, k.Arch,
		LabelSchematic, prefix(k.SchematicID, maxLabelValue))
}

func temporarySelector() string {
	return selector(LabelManagedBy, managedByValue, LabelTemporary, "true", LabelPurpose, purposeValue)
}

func prefix(s string, n int) string {
	if len(s) > n {
		return s[:n]
	}
	return s
}
