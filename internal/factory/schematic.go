// Package factory computes Talos Image Factory schematic IDs offline and talks
// to an Image Factory over HTTP: registering schematics, listing Talos versions
// and official system extensions, and spelling the disk image and installer
// references that the imaging and upgrade steps use.
package factory

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"
)

// EmptySchematicID is the ID of the schematic without any customization: the
// stock Talos image. It is the first vector of the Image Factory's own tests
// (siderolabs/image-factory pkg/schematic/schematic_test.go, TestID "empty").
const EmptySchematicID = "376567988ad370138ad8b2698212367b8edcb69b5fd68c80be1f2ec7d603b4ba"

// Schematic mirrors the Image Factory's schematic document
// (siderolabs/image-factory pkg/schematic/schematic.go, type Schematic).
//
// The field order and the YAML tags are part of the ID: the factory hashes
// yaml.v3's marshalling of its own struct, so this type keeps the same order
// and the same omitempty tags for the result to be byte-identical.
type Schematic struct {
	// Overlay is a board overlay (single-board computers); unused on Hetzner.
	Overlay Overlay `yaml:"overlay,omitempty"`
	// Customization is what the schematic adds to the stock image.
	Customization Customization `yaml:"customization"`
}

// Customization is the Talos image customization of a schematic.
type Customization struct {
	// ExtraKernelArgs are appended to the kernel command line.
	ExtraKernelArgs []string `yaml:"extraKernelArgs,omitempty"`
	// Meta is the initial content of the META partition.
	Meta []MetaValue `yaml:"meta,omitempty"`
	// SystemExtensions lists the official system extensions to install.
	SystemExtensions SystemExtensions `yaml:"systemExtensions,omitempty"`
	// Bootloader selects the disk image bootloader: "", "dual-boot",
	// "sd-boot" or "grub". Upstream this is imageropts.BootloaderKind
	// (talos pkg/machinery/imager/imageropts), an int whose zero value
	// ("none") is omitted and whose text form is one of those names; an
	// empty string here marshals identically.
	Bootloader string `yaml:"bootloader,omitempty"`
	// SecureBoot customises a SecureBoot image.
	SecureBoot SecureBoot `yaml:"secureboot,omitempty"`
	// DiskImage customises the disk image.
	DiskImage DiskImage `yaml:"diskImage,omitempty"`
}

// MetaValue is one META partition key and its value.
type MetaValue struct {
	// Key is the META key (0-255).
	Key uint8 `yaml:"key"`
	// Value is the META value.
	Value string `yaml:"value"`
}

// SystemExtensions holds the official extensions by image name, for example
// "siderolabs/iscsi-tools". The factory picks the version matching the Talos
// version of the image being built.
type SystemExtensions struct {
	// OfficialExtensions are the extension names, in the operator's order.
	OfficialExtensions []string `yaml:"officialExtensions,omitempty"`
}

// Overlay is a board overlay: its image, name and options.
type Overlay struct {
	// Image is the overlay image, for example "siderolabs/sbc-raspberrypi".
	Image string `yaml:"image"`
	// Name is the overlay name within the image, for example "rpi_generic".
	Name string `yaml:"name"`
	// Options are passed to the overlay installer.
	Options map[string]any `yaml:"options,omitempty"`
}

// SecureBoot holds the SecureBoot options of a schematic.
type SecureBoot struct {
	// IncludeWellKnownCertificates adds the well-known UEFI certificates to
	// the auto-enrollment database.
	IncludeWellKnownCertificates bool `yaml:"includeWellKnownCertificates,omitempty"`
}

// DiskImage holds the disk image options of a schematic.
type DiskImage struct {
	// SectorSize is the disk image sector size in bytes (0: default).
	SectorSize uint `yaml:"sectorSize,omitempty"`
}

// validBootloader reports whether b is an accepted Customization.Bootloader:
// the text forms of the enumer-generated imageropts.BootloaderKind, with
// "none" (its zero value) already normalised to "" so it is omitted like
// upstream.
func validBootloader(b string) bool {
	switch b {
	case "", "dual-boot", "sd-boot", "grub":
		return true
	}
	return false
}

// New returns the schematic installing the given official extensions and
// kernel arguments. Order is kept as given: the Image Factory does not sort
// or deduplicate either list before hashing (pkg/schematic Unmarshal/ID), so
// reordering would change the ID. Empty lists are omitted from the document.
func New(extensions []string, kernelArgs []string) Schematic {
	var s Schematic
	if len(extensions) > 0 {
		s.Customization.SystemExtensions.OfficialExtensions = slices.Clone(extensions)
	}
	if len(kernelArgs) > 0 {
		s.Customization.ExtraKernelArgs = slices.Clone(kernelArgs)
	}
	return s
}

// Parse reads a schematic in YAML or JSON (JSON is read as YAML, as the
// factory does). Unknown keys are rejected, like the factory's decoder with
// KnownFields(true): a typo would otherwise silently produce the stock image.
func Parse(data []byte) (Schematic, error) {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)

	var s Schematic
	if err := dec.Decode(&s); err != nil {
		if errors.Is(err, io.EOF) {
			return Schematic{}, errors.New("parse schematic: the document is empty; write at least \"customization: {}\"")
		}
		if strings.Contains(err.Error(), "not found in type") {
			return Schematic{}, fmt.Errorf("parse schematic: unknown key (%w); allowed keys are overlay{image,name,options} and "+
				"customization{extraKernelArgs,meta,systemExtensions{officialExtensions},bootloader,secureboot{includeWellKnownCertificates},diskImage{sectorSize}}", err)
		}
		return Schematic{}, fmt.Errorf("parse schematic: %w", err)
	}

	bl := strings.ToLower(s.Customization.Bootloader)
	if bl == "none" {
		bl = ""
	}
	if !validBootloader(bl) {
		return Schematic{}, fmt.Errorf("parse schematic: customization.bootloader %q is not one of dual-boot, sd-boot, grub", s.Customization.Bootloader)
	}
	s.Customization.Bootloader = bl
	return s, nil
}

// Marshal returns the canonical YAML of the schematic: the bytes its ID
// hashes, and the body Register sends.
func (s Schematic) Marshal() ([]byte, error) {
	data, err := yaml.Marshal(&s)
	if err != nil {
		return nil, fmt.Errorf("marshal schematic: %w", err)
	}
	return data, nil
}

// ID returns the schematic ID: the hex SHA-256 of Marshal, computed like the
// factory's (*Schematic).ID in siderolabs/image-factory pkg/schematic.
func (s Schematic) ID() (string, error) {
	data, err := s.Marshal()
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:]), nil
}
