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

// writeAddonManifests writes the objects the addons step applies, one
// multi-document YAML file per add-on under out/manifests (mode 0600: the
// hcloud Secret holds the token unless redact), through privatefile so an
// older, wider file is replaced by a 0600 one rather than written in place.
func writeAddonManifests(cmd *cobra.Command, rt *runtime, out string, redact bool) error {
	rendered, err := steps.RenderAddons(cmd.Context(), rt.deps, rt.env, redact)
	if err != nil {
		return fmt.Errorf("%s", rt.redact(err.Error()))
	}
	dir := filepath.Join(out, "manifests")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	for _, a := range rendered {
		data, err := addons.Manifest(a, redact)
		if err != nil {
			return err
		}
		p := filepath.Join(dir, a.Name+".yaml")
		target, err := privatefile.Write(p, data)
		if err != nil {
			return err
		}
		fmt.Fprintf(cmd.OutOrStdout(), "wrote %s (add-on %s, %d objects, %d bytes)\n", privatefile.Describe(p, target), a.Name, len(a.Objects), len(data))
	}
	return nil
}
