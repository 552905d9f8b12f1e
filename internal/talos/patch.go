package talos

import (
	"errors"
	"fmt"

	coreconfig "github.com/siderolabs/talos/pkg/machinery/config"
	"github.com/siderolabs/talos/pkg/machinery/config/config"
	"github.com/siderolabs/talos/pkg/machinery/config/configloader"
	"github.com/siderolabs/talos/pkg/machinery/config/configpatcher"
	"github.com/siderolabs/talos/pkg/machinery/config/container"
	"github.com/siderolabs/talos/pkg/machinery/config/encoder"
	"github.com/siderolabs/talos/pkg/machinery/config/types/v1alpha1"
)

// Patch is one operator machine-config patch: a strategic merge patch (one
// or more YAML documents) or JSON 6902 operations, as machinery's
// configpatcher.LoadPatch reads them.
type Patch struct {
	// Name names the patch in errors and warnings, e.g.
	// "pools[0].patches[1]" or "controlPlane.patches[0] (@patches/cp.yaml)".
	Name string
	// Data is the patch's YAML.
	Data []byte
}

// PatchError is a patch that does not load or apply.
type PatchError struct {
	// Patch is the patch's name.
	Patch string
	// Err is why.
	Err error
}

// Error implements error.
func (e *PatchError) Error() string {
	return fmt.Sprintf("patch %s: %v; fix or remove the patch (a strategic merge patch is a map of v1alpha1 keys or typed documents; JSON 6902 operations address the v1alpha1 document, e.g. /machine/sysctls)", e.Patch, e.Err)
}

// Unwrap returns the cause.
func (e *PatchError) Unwrap() error { return e.Err }

// applyPatches applies the patches in order to cfg. A strategic merge
// patch merges into the whole document set (configpatcher.Apply). JSON 6902
// operations apply to the v1alpha1 document alone: machinery's JSON6902
// refuses a multi-document config ("JSON6902 patches are not supported for
// multi-document machine configuration", configpatcher/json6902.go), and
// every config ohmytalos renders has several documents.
//
// It also returns a warning for each setting ohmytalos depends on that a
// patch changed, naming the patch (dependencyWarnings).
func applyPatches(cfg coreconfig.Provider, patches []Patch) (coreconfig.Provider, []string, error) {
	var warnings []string
	for _, p := range patches {
		next, err := applyPatch(cfg, p)
		if err != nil {
			return nil, nil, err
		}
		warnings = append(warnings, dependencyWarnings(cfg, next, p.Name)...)
		cfg = next
	}
	return cfg, warnings, nil
}

// applyPatch applies one patch.
func applyPatch(cfg coreconfig.Provider, p Patch) (coreconfig.Provider, error) {
	loaded, err := configpatcher.LoadPatch(p.Data)
	if err != nil {
		return nil, &PatchError{Patch: p.Name, Err: fmt.Errorf("it is not a Talos machine-config patch: %w", err)}
	}
	if _, ok := loaded.(configpatcher.StrategicMergePatch); ok {
		out, err := configpatcher.Apply(configpatcher.WithConfig(cfg), []configpatcher.Patch{loaded})
		if err == nil {
			cfg, err = out.Config()
		}
		if err != nil {
			return nil, &PatchError{Patch: p.Name, Err: fmt.Errorf("it does not apply: %w", err)}
		}
		return cfg, nil
	}
	if cfg, err = applyJSON6902(cfg, loaded); err != nil {
		return nil, &PatchError{Patch: p.Name, Err: fmt.Errorf("its JSON 6902 operations do not apply to the v1alpha1 document: %w", err)}
	}
	return cfg, nil
}

// applyJSON6902 applies JSON 6902 operations to cfg's v1alpha1 document
// and keeps the other documents.
func applyJSON6902(cfg coreconfig.Provider, p configpatcher.Patch) (coreconfig.Provider, error) {
	v1 := cfg.RawV1Alpha1()
	if v1 == nil {
		return nil, errors.New("the config has no v1alpha1 document")
	}
	single, err := container.New(v1)
	if err != nil {
		return nil, err
	}
	b, err := single.EncodeBytes(encoder.WithComments(encoder.CommentsDisabled))
	if err != nil {
		return nil, err
	}
	out, err := configpatcher.Apply(configpatcher.WithBytes(b), []configpatcher.Patch{p})
	if err != nil {
		return nil, err
	}
	pb, err := out.Bytes()
	if err != nil {
		return nil, err
	}
	patched, err := configloader.NewFromBytes(pb)
	if err != nil {
		return nil, fmt.Errorf("the result is no longer a v1alpha1 config: %w", err)
	}
	docs := []config.Document{}
	for _, d := range cfg.Documents() {
		if _, ok := d.(*v1alpha1.Config); ok {
			docs = append(docs, patched.RawV1Alpha1())
			continue
		}
		docs = append(docs, d)
	}
	return container.New(docs...)
}
