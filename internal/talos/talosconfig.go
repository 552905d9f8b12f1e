package talos

import (
	"errors"
	"fmt"

	"github.com/siderolabs/talos/pkg/machinery/config/generate"
	"github.com/siderolabs/talos/pkg/machinery/config/generate/secrets"
)

// Talosconfig returns an admin talosconfig (YAML) for the cluster: one
// context named after the cluster, the given Talos API endpoints (node IPs or
// names; port 50000 is implied) and a fresh admin client certificate signed
// by the bundle's Talos CA. Unlike machine configs it differs on every call:
// the client key is new each time.
func Talosconfig(bundle *secrets.Bundle, c Cluster, endpoints []string) ([]byte, error) {
	if bundle == nil {
		return nil, errors.New("generate talosconfig: the secrets bundle is nil; load it with LoadBundle first")
	}

	if bundle.Certs == nil || bundle.Certs.OS == nil {
		return nil, errors.New("generate talosconfig: the secrets bundle has no Talos CA: it is incomplete; restore it from the cluster's state")
	}

	if len(endpoints) == 0 {
		return nil, errors.New("generate talosconfig: no endpoints: pass at least one control plane address")
	}

	if c.Name == "" {
		return nil, errors.New("generate talosconfig: cluster name is empty: set the cluster name")
	}

	contract, err := versionContract(c.TalosVersion)
	if err != nil {
		return nil, fmt.Errorf("generate talosconfig: %w", err)
	}

	// The client certificate is issued at bundle.Clock.Now(); a bundle built
	// by hand may have no clock, so work on a copy with the system clock.
	b := *bundle
	if b.Clock == nil {
		b.Clock = secrets.NewClock()
	}

	// The endpoint only feeds machine configs, which are not generated here;
	// the Kubernetes version is irrelevant to the talosconfig.
	endpoint := "https://" + joinHostPort(endpoints[0], APIServerPort)

	in, err := generate.NewInput(c.Name, endpoint, "",
		generate.WithVersionContract(contract),
		generate.WithSecretsBundle(&b),
		generate.WithEndpointList(endpoints),
	)
	if err != nil {
		return nil, fmt.Errorf("generate talosconfig: prepare generator input: %w", err)
	}

	cfg, err := in.Talosconfig()
	if err != nil {
		return nil, fmt.Errorf("generate talosconfig: issue the admin client certificate: %w", err)
	}

	data, err := cfg.Bytes()
	if err != nil {
		return nil, fmt.Errorf("generate talosconfig: encode: %w", err)
	}

	return data, nil
}
