package factoryfake

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"strings"

	"go.yaml.in/yaml/v3"
)

// The fake's own model of the Image Factory's schematic, written from
// siderolabs/image-factory pkg/schematic/schematic.go: the ID is the hex
// SHA-256 of the YAML marshalling of this document, so field order, YAML
// names and omitempty are part of the ID and follow upstream exactly,
// including the fields ohmytalos never sends (owner,
// embeddedMachineConfiguration, secureboot.enrollKeys). Upstream marshals
// with go.yaml.in/yaml/v4, whose output for these documents matches
// yaml.v3's (block style, four-space indent): the published vectors in
// schematic_test.go hold both to it.

// schematicDoc is the schematic document.
type schematicDoc struct {
	Owner         string        `yaml:"owner,omitempty"`
	Overlay       overlay       `yaml:"overlay,omitempty"`
	Customization customization `yaml:"customization"`
}

// customization is the Talos image customization, in upstream's order.
type customization struct {
	EmbeddedMachineConfiguration string           `yaml:"embeddedMachineConfiguration,omitempty"`
	ExtraKernelArgs              []string         `yaml:"extraKernelArgs,omitempty"`
	Meta                         []metaValue      `yaml:"meta,omitempty"`
	SystemExtensions             systemExtensions `yaml:"systemExtensions,omitempty"`
	Bootloader                   bootloaderKind   `yaml:"bootloader,omitempty"`
	SecureBoot                   secureBoot       `yaml:"secureboot,omitempty"`
	DiskImage                    diskImage        `yaml:"diskImage,omitempty"`
}

type metaValue struct {
	Key   uint8  `yaml:"key"`
	Value string `yaml:"value"`
}

type systemExtensions struct {
	OfficialExtensions []string `yaml:"officialExtensions,omitempty"`
}

type overlay struct {
	Image   string         `yaml:"image"`
	Name    string         `yaml:"name"`
	Options map[string]any `yaml:"options,omitempty"`
}

type secureBoot struct {
	EnrollKeys                   string `yaml:"enrollKeys,omitempty"`
	IncludeWellKnownCertificates bool   `yaml:"includeWellKnownCertificates,omitempty"`
}

type diskImage struct {
	SectorSize uint `yaml:"sectorSize,omitempty"`
}

// bootloaderKind is Talos' imageropts.BootloaderKind (pkg/machinery
// imager/imageropts, enumer -linecomment -text): an integer whose zero
// value "none" is omitted and whose text form is its name.
type bootloaderKind int

var bootloaderNames = []string{"none", "dual-boot", "sd-boot", "grub"}

// MarshalText writes the bootloader's name.
func (b bootloaderKind) MarshalText() ([]byte, error) {
	if b < 0 || int(b) >= len(bootloaderNames) {
		return nil, fmt.Errorf("bootloader kind %d is unknown", int(b))
	}
	return []byte(bootloaderNames[b]), nil
}

// UnmarshalText reads a bootloader name, in any case.
func (b *bootloaderKind) UnmarshalText(text []byte) error {
	for i, n := range bootloaderNames {
		if strings.EqualFold(string(text), n) {
			*b = bootloaderKind(i)
			return nil
		}
	}
	return fmt.Errorf("%q is not a bootloader: use one of %s", text, strings.Join(bootloaderNames, ", "))
}

// parseSchematic reads a schematic as the factory's Unmarshal does: YAML
// (JSON is YAML), unknown keys refused. The community edition refuses an
// owner (upstream Schematic.Validate).
func parseSchematic(data []byte) (*schematicDoc, error) {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	var s schematicDoc
	if err := dec.Decode(&s); err != nil {
		if errors.Is(err, io.EOF) {
			return &s, nil // an empty body is the empty schematic
		}
		return nil, fmt.Errorf("invalid schematic: %w", err)
	}
	if s.Owner != "" {
		return nil, errors.New("invalid schematic: owner field is only supported in Enterprise edition")
	}
	return &s, nil
}

// canonical returns the document's canonical form and its ID.
func (s *schematicDoc) canonical() (data []byte, id string, err error) {
	data, err = yaml.Marshal(s)
	if err != nil {
		return nil, "", fmt.Errorf("marshal schematic: %w", err)
	}
	sum := sha256.Sum256(data)
	return data, hex.EncodeToString(sum[:]), nil
}
