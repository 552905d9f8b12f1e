package steps

import (
	"context"
	"fmt"

	"go.yaml.in/yaml/v3"

	"github.com/ohmytalos/ohmytalos/internal/addons"
	"github.com/ohmytalos/ohmytalos/internal/charts"
	"github.com/ohmytalos/ohmytalos/internal/engine"
)

// RenderedRelease is one release as talos-config --out writes it.
type RenderedRelease struct {
	// Addon is the add-on's name (the file name under manifests/ and
	// values/), or the extra chart's name.
	Addon string
	// Release and Chart name the release and its chart version.
	Release charts.Release
	Chart   charts.Ref
	// Manifest is the rendered manifest, exactly what the release applies
	// (the CRDs first, then the objects, as helm stores them).
	Manifest string
	// Values are the merged values as YAML. No value holds a secret: the
	// token is in the kube-system/hcloud Secret, which values name.
	Values []byte
	// HandedOver is true for addons.NAME.managed: false.
	HandedOver bool
	// Objects is the number of objects rendered.
	Objects int
}

// RenderReleases fetches and renders every release the spec asks for,
// at the cluster's Kubernetes version, for talos-config --out. Without
// redact the values carry the ingress load balancer's IPv6 as apply's do
// (planAddonInputs); with redact nothing is read that needs the token.
func RenderReleases(ctx context.Context, d *Deps, env *engine.Env, redact bool) ([]RenderedRelease, error) {
	in := planInputs(env)
	if !redact {
		var err error
		if in, err = d.planAddonInputs(ctx, env); err != nil {
			return nil, err
		}
	}
	rels, err := wantedReleases(env.Spec, in)
	if err != nil {
		return nil, err
	}
	var out []RenderedRelease
	for _, r := range rels {
		ch, err := d.fetchChart(ctx, r, func(engine.Event) {})
		if err != nil {
			return nil, err
		}
		rd, err := charts.Render(ch, r.Release, r.Values, env.Spec.Kubernetes.Version)
		if err != nil {
			return nil, fmt.Errorf("add-on %s: %w", r.Addon, err)
		}
		vals, err := yaml.Marshal(r.Values)
		if err != nil {
			return nil, fmt.Errorf("add-on %s: values: %w", r.Addon, err)
		}
		manifest := rd.Manifest
		for _, c := range rd.CRDs {
			b, err := yaml.Marshal(c.Object)
			if err != nil {
				return nil, fmt.Errorf("add-on %s: CRD %s: %w", r.Addon, c.GetName(), err)
			}
			manifest = "---\n" + string(b) + manifest
		}
		out = append(out, RenderedRelease{Addon: r.Addon, Release: r.Release, Chart: r.Ref, Manifest: manifest,
			Values: vals, HandedOver: !r.Managed, Objects: len(rd.CRDs) + len(rd.Objects)})
	}
	return out, nil
}

// TypedAddons are the add-ons' typed objects (those no chart renders),
// grouped by add-on, for talos-config --out: an add-on from a chart
// keeps only its typed objects (the longhorn Namespace, the metadata
// policy).
func TypedAddons(rendered []addons.Addon) []addons.Addon {
	var out []addons.Addon
	for _, a := range rendered {
		before, after := addons.TypedObjects([]addons.Addon{a})
		objs := append(before, after...)
		if len(objs) == 0 {
			continue
		}
		a.Objects = objs
		out = append(out, a)
	}
	return out
}
