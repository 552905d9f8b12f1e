package addons

import (
	"fmt"

	"github.com/ohmytalos/ohmytalos/internal/charts"
	"github.com/ohmytalos/ohmytalos/internal/spec"
)

// Values are ohmytalos's chart values of an add-on (by name, spec key or
// release name, as ChartOf takes them) for a defaulted spec, in the
// upstream chart's keys. The operator's addons.NAME.values are merged
// over them (charts.Merge). No value holds a secret: the token stays in
// the kube-system/hcloud Secret, which the values name.
func Values(sp *spec.Spec, in Inputs, name string) ([]charts.Value, error) {
	c, err := chartNamed(name)
	if err != nil {
		return nil, err
	}
	switch c.Addon {
	case Cilium:
		return CiliumValues(sp, in), nil
	case HCloudCCM:
		return HCloudCCMValues(sp, in), nil
	case HCloudCSI:
		return HCloudCSIValues(sp, in), nil
	case Longhorn:
		return LonghornValues(sp, in), nil
	case MetricsServer:
		return MetricsServerValues(sp, in), nil
	case ingressAddon:
		return TraefikValues(sp, in), nil
	}
	return nil, fmt.Errorf("add-on %q has no values", name)
}

// need is a value Talos on Hetzner needs: overriding it gets a plan warning.
func need(path string, v any, why string) charts.Value {
	return charts.Value{Path: path, Value: v, Why: why, Required: true}
}

// set is a value ohmytalos chooses that the operator may change freely.
func set(path string, v any, why string) charts.Value {
	return charts.Value{Path: path, Value: v, Why: why}
}

// workerCount is the number of worker nodes the spec asks for.
func workerCount(sp *spec.Spec) int {
	n := 0
	for _, p := range sp.Pools {
		n += p.Count
	}
	return n
}

// upTo is n, at least 1 and at most limit.
func upTo(n, limit int) int {
	return max(1, min(n, limit))
}
