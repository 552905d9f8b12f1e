package main

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/ohmytalos/ohmytalos/internal/addons"
	"github.com/ohmytalos/ohmytalos/internal/privatefile"
	"github.com/ohmytalos/ohmytalos/steps"
)

// writeAddonManifests writes what the addons step applies: per Helm
// release, out/manifests/NAME.yaml (the chart rendered, exactly what the
// release applies) and out/values/NAME.yaml (the merged values); per
// add-on with typed objects, out/manifests/NAME.yaml, or NAME.typed.yaml
// beside a release's manifest. Every file is mode 0600 (the hcloud
// Secret holds the token unless redact), through privatefile so an older,
// wider file is replaced by a 0600 one rather than written in place.
func writeAddonManifests(cmd *cobra.Command, rt *runtime, out string, redact bool) error {
	rendered, err := steps.RenderAddons(cmd.Context(), rt.deps, rt.env, redact)
	if err != nil {
		return fmt.Errorf("%s", rt.redact(err.Error()))
	}
	rels, err := steps.RenderReleases(cmd.Context(), rt.deps, rt.env, redact)
	if err != nil {
		return fmt.Errorf("%s", rt.redact(err.Error()))
	}
	for _, d := range []string{"manifests", "values"} {
		if err := os.MkdirAll(filepath.Join(out, d), 0o700); err != nil {
			return err
		}
	}
	for _, a := range steps.TypedAddons(rendered) {
		data, err := addons.Manifest(a, redact)
		if err != nil {
			return err
		}
		name := a.Name + ".yaml"
		if _, fromChart := addons.ChartOf(a.Name); fromChart {
			name = a.Name + ".typed.yaml"
		}
		if err := writeOut(cmd, filepath.Join(out, "manifests", name), data,
			fmt.Sprintf("add-on %s, %d typed objects", a.Name, len(a.Objects))); err != nil {
			return err
		}
	}
	for _, r := range rels {
		what := fmt.Sprintf("helm release %s/%s, chart %s %s, %d objects", r.Release.Namespace, r.Release.Name, r.Chart.Name, r.Chart.Version, r.Objects)
		if r.HandedOver {
			what += ", handed over: ohmytalos does not apply it"
		}
		if err := writeOut(cmd, filepath.Join(out, "manifests", r.Addon+".yaml"), []byte(r.Manifest), what); err != nil {
			return err
		}
		if err := writeOut(cmd, filepath.Join(out, "values", r.Addon+".yaml"), r.Values, "values of "+r.Addon); err != nil {
			return err
		}
	}
	return nil
}

// writeOut writes one 0600 file and says so.
func writeOut(cmd *cobra.Command, p string, data []byte, what string) error {
	target, err := privatefile.Write(p, data)
	if err != nil {
		return err
	}
	fmt.Fprintf(cmd.OutOrStdout(), "wrote %s (%s, %d bytes)\n", privatefile.Describe(p, target), what, len(data))
	return nil
}
