package talos

import (
	"bytes"
	"errors"
	"fmt"

	"github.com/siderolabs/talos/pkg/machinery/config"
	"github.com/siderolabs/talos/pkg/machinery/config/generate/secrets"
	"go.yaml.in/yaml/v4"
)

// NewBundle creates the cluster's secrets bundle (CAs, tokens, encryption
// secrets) for the given Talos version and returns it marshalled to YAML, the
// same format `talosctl gen secrets` writes, so an operator can also feed it to
// `talosctl gen config --with-secrets`. The bytes are the cluster's root of
// trust: the caller must store them encrypted.
func NewBundle(talosVersion string) ([]byte, error) {
	contract, err := versionContract(talosVersion)
	if err != nil {
		return nil, err
	}

	bundle, err := secrets.NewBundle(secrets.NewClock(), contract)
	if err != nil {
		return nil, fmt.Errorf("generate talos secrets bundle: %w", err)
	}

	var buf bytes.Buffer

	// The machinery marshals bundles with go.yaml.in/yaml/v4 (see
	// config/generate/secrets/bundle.go LoadBundle); use the same library so
	// the field names and PEM encodings round-trip.
	enc := yaml.NewEncoder(&buf)
	if err := enc.Encode(bundle); err != nil {
		return nil, fmt.Errorf("encode talos secrets bundle: %w", err)
	}

	if err := enc.Close(); err != nil {
		return nil, fmt.Errorf("encode talos secrets bundle: %w", err)
	}

	return buf.Bytes(), nil
}

// LoadBundle decodes a bundle produced by NewBundle (or `talosctl gen
// secrets`) and checks that it is complete. The returned bundle uses the
// system clock, which only matters for the client certificates Talosconfig
// issues.
func LoadBundle(data []byte) (*secrets.Bundle, error) {
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, errors.New("load talos secrets bundle: the data is empty; restore the cluster's secrets bundle from its encrypted state")
	}

	bundle := &secrets.Bundle{Clock: secrets.NewClock()}

	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)

	if err := dec.Decode(bundle); err != nil {
		return nil, fmt.Errorf("load talos secrets bundle: not a valid bundle YAML (%w); was the state decrypted with the right key?", err)
	}

	if err := bundle.Validate(); err != nil {
		return nil, fmt.Errorf("load talos secrets bundle: incomplete bundle: %w", err)
	}

	return bundle, nil
}

// versionContract parses a Talos version ("v1.13.9" or "1.13") into the
// machinery's version contract and refuses versions this package cannot
// render for: VolumeConfig encryption needs Talos >= 1.11 and HCloudVIPConfig
// (multi-document network config) needs Talos >= 1.12.
func versionContract(talosVersion string) (*config.VersionContract, error) {
	if talosVersion == "" {
		return nil, errors.New("talos version is empty: set the cluster's Talos version, e.g. v1.13.9")
	}

	contract, err := config.ParseContractFromVersion(talosVersion)
	if err != nil {
		return nil, fmt.Errorf("talos version %q is not a version like v1.13.9: %w", talosVersion, err)
	}

	if !contract.MultidocNetworkConfigSupported() {
		return nil, fmt.Errorf("talos version %q is too old: ohmytalos needs Talos v1.12 or newer (HCloudVIPConfig, encrypted VolumeConfig); pick a newer Talos version", talosVersion)
	}

	return contract, nil
}
