package steps

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/ohmytalos/ohmytalos/internal/addons"
	"github.com/ohmytalos/ohmytalos/internal/charts"
	"github.com/ohmytalos/ohmytalos/internal/engine"
	"github.com/ohmytalos/ohmytalos/internal/spec"
)

// addonRelease is one Helm release the spec asks for: a built-in add-on
// from its pinned chart, or a chart of addons.extra.
type addonRelease struct {
	// Addon is the add-on's name ("hcloud-ccm") or the extra chart's name.
	Addon string
	// Key is where its settings are under addons in the spec
	// ("hcloudCCM", "extra[0]").
	Key     string
	Release charts.Release
	Ref     charts.Ref
	// Managed false: handed over, ohmytalos never touches the release.
	Managed bool
	// OwnDigest is set when the spec pins the chart's digest itself
	// (addons.KEY.chart.digest, addons.extra[i].chart.digest): it is
	// checked wherever the chart comes from, the sandbox's mirror too.
	OwnDigest bool
	// Values are the merged values (user wins); Overridden are
	// ohmytalos's values the operator's replaced.
	Values     map[string]any
	Overridden []charts.Value
}

// wantedReleases are the releases of a defaulted spec, in install order:
// the enabled pins (addons.Charts, so a new pin joins by its switch),
// then addons.extra in the spec's order.
func wantedReleases(sp *spec.Spec, in addons.Inputs) ([]addonRelease, error) {
	on := addons.Enabled(sp)
	var out []addonRelease
	for _, c := range addons.Charts() {
		a, ok := addons.SpecAddon(sp, c.Key)
		if !ok || !on[c.Addon] {
			continue
		}
		r, err := pinRelease(sp, in, c, a)
		if err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	for i, x := range sp.Addons.Extra {
		merged, _, err := charts.Merge(nil, x.Values)
		if err != nil {
			return nil, fmt.Errorf("addons.extra[%d] (%s) values: %w", i, x.Name, err)
		}
		ref := x.Chart
		if ref.Path != "" {
			ref.Path = sp.ChartPath(ref)
		}
		out = append(out, addonRelease{Addon: x.Name, Key: fmt.Sprintf("extra[%d]", i),
			Release: charts.Release{Name: x.Name, Namespace: x.Namespace}, Ref: ref, Managed: true, OwnDigest: ref.Digest != "", Values: merged})
	}
	return out, nil
}

// extra reports whether the release is one of addons.extra.
func (r addonRelease) extra() bool { return strings.HasPrefix(r.Key, "extra[") }

// pinRelease is the release of one enabled built-in add-on.
func pinRelease(sp *spec.Spec, in addons.Inputs, c addons.Chart, a spec.Addon) (addonRelease, error) {
	ref, err := addons.ChartRef(sp, c.Key)
	if err != nil {
		return addonRelease{}, err
	}
	ours, err := addons.Values(sp, in, c.Addon)
	if err != nil {
		return addonRelease{}, err
	}
	merged, over, err := charts.Merge(ours, a.Values)
	if err != nil {
		return addonRelease{}, fmt.Errorf("addons.%s.values: %w", c.Key, err)
	}
	return addonRelease{Addon: c.Addon, Key: c.Key, Release: c.Release, Ref: ref,
		Managed: a.IsManaged(), OwnDigest: a.Chart != nil && a.Chart.Digest != "", Values: merged, Overridden: over}, nil
}

// switchedOff are the built-in releases the spec switches off whose
// release ohmytalos manages: Apply uninstalls them when present.
func switchedOff(sp *spec.Spec) []addons.Chart {
	on := addons.Enabled(sp)
	var out []addons.Chart
	for _, c := range addons.Charts() {
		a, ok := addons.SpecAddon(sp, c.Key)
		if ok && !on[c.Addon] && a.IsManaged() {
			out = append(out, c)
		}
	}
	return out
}

// requiredWarnings are the plan notes for ohmytalos's required values
// the operator's values override: allowed, but named.
func requiredWarnings(rels []addonRelease) []string {
	var out []string
	for _, r := range rels {
		for _, v := range r.Overridden {
			if v.Required {
				out = append(out, fmt.Sprintf("warning: addons.%s.values overrides %s, which Talos on Hetzner needs (%s)", r.Key, v.Path, v.Why))
			}
		}
	}
	return out
}

// fetchChart fetches a release's chart, the error naming the add-on. A
// chart mirror's charts are the sandbox's stand-ins (checked against the
// mirror's own index) only when the Hetzner API is the sandbox's and the
// spec pins no digest of its own; otherwise each must be the pinned
// archive (charts.Source.Mirror).
func (d *Deps) fetchChart(ctx context.Context, r addonRelease, emit engine.Emit) (*charts.Chart, error) {
	src := d.Charts(d.Sandbox && !r.OwnDigest, func(msg string) {
		emit(engine.Event{Kind: engine.KindProgress, Resource: "addon/" + r.Addon, Message: msg})
	})
	return src.FetchFor(ctx, r.Key, r.Ref)
}

// fetchCharts fetches the chart of every managed release, by Key, before
// any is installed: a chart refused (one a mirror serves that is not the
// pinned archive) stops the step with nothing installed.
func (d *Deps) fetchCharts(ctx context.Context, rels []addonRelease, emit engine.Emit) (map[string]*charts.Chart, error) {
	out := map[string]*charts.Chart{}
	for _, r := range rels {
		if !r.Managed {
			continue
		}
		ch, err := d.fetchChart(ctx, r, emit)
		if err != nil {
			return nil, err
		}
		out[r.Key] = ch
	}
	return out, nil
}

// CheckCharts names MirroredChartFindings' findings.
const CheckCharts = "charts"

// MirroredChartFindings fetches every chart the spec installs when they
// come through a chart mirror outside the sandbox, for apply and the
// wizard's review to call before anything is created: a chart the mirror
// serves that is not the pinned archive is an error finding (the first
// one refused, naming the chart, the mirror and both digests), so the run
// stops before the first server, not at the addons step. In the sandbox,
// or without a mirror, it finds nothing (the addons step fetches and
// checks every chart before installing any).
func MirroredChartFindings(ctx context.Context, d *Deps, env *engine.Env) Findings {
	if d.ChartMirror == "" || d.Sandbox {
		return nil
	}
	rels, err := wantedReleases(env.Spec, planInputs(env))
	if err == nil {
		_, err = d.fetchCharts(ctx, rels, func(engine.Event) {})
	}
	if err == nil {
		return nil
	}
	field := "addons"
	if fe := (*charts.FetchError)(nil); errors.As(err, &fe) && fe.Addon != "" {
		field = "addons." + fe.Addon + ".chart"
	}
	return Findings{{Check: CheckCharts, Severity: SeverityError, Field: field, Reason: err.Error()}}
}
