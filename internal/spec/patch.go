package spec

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/siderolabs/talos/pkg/machinery/config/configpatcher"
	"go.yaml.in/yaml/v3"
)

// Patch is one Talos machine-config patch of the spec: a map (a strategic
// merge patch), a list (JSON 6902 operations on the v1alpha1 document) or
// the string "@PATH", a file beside the spec holding either. Its YAML form
// is kept as written, so Save writes back what the operator wrote.
type Patch struct {
	node yaml.Node
	// data is the patch's YAML: the inline value, or the file's content
	// once LoadPatchFiles read it.
	data []byte
}

// UnmarshalYAML implements yaml.Unmarshaler: any value is kept, and
// Validate says whether it is a patch.
func (p *Patch) UnmarshalYAML(n *yaml.Node) error {
	p.node = *n
	p.data = nil
	return nil
}

// MarshalYAML implements yaml.Marshaler: the value as written.
func (p Patch) MarshalYAML() (any, error) {
	n := p.node
	return &n, nil
}

// ParsePatch reads one patch as the spec writes it (YAML of a map, a list
// or "@PATH"), for the wizard and tests.
func ParsePatch(text string) (Patch, error) {
	var p Patch
	if err := yaml.Unmarshal([]byte(text), &p); err != nil {
		return Patch{}, fmt.Errorf("patch is not YAML: %w", err)
	}
	return p, nil
}

// File is PATH of an "@PATH" patch.
func (p Patch) File() (string, bool) {
	if p.node.Kind != yaml.ScalarNode || !strings.HasPrefix(p.node.Value, "@") {
		return "", false
	}
	return strings.TrimPrefix(p.node.Value, "@"), true
}

// Data is the patch's YAML: the inline map or list, or the content of its
// file (read by LoadPatchFiles, which Load calls).
func (p Patch) Data() ([]byte, error) {
	if f, ok := p.File(); ok {
		if p.data == nil {
			return nil, fmt.Errorf("patch file %s was not read: load the spec with spec.Load, which reads patch files relative to the spec's folder", f)
		}
		return p.data, nil
	}
	var b bytes.Buffer
	enc := yaml.NewEncoder(&b)
	enc.SetIndent(2)
	n := p.node
	if err := enc.Encode(&n); err != nil {
		return nil, fmt.Errorf("encode patch: %w", err)
	}
	return b.Bytes(), nil
}

// NamedPatch is a patch with the name errors and warnings give it:
// its field path, and its file for an "@PATH" patch.
type NamedPatch struct {
	// Name is e.g. "pools[0].patches[1]" or "controlPlane.patches[0] (@patches/cp.yaml)".
	Name string
	// Data is the patch's YAML.
	Data []byte
}

// patchLists are the spec's patch lists with their field paths, in the
// order they apply: talos first, then the control plane and each pool.
func (s *Spec) patchLists() []struct {
	field string
	list  []Patch
} {
	out := []struct {
		field string
		list  []Patch
	}{{"talos.patches", s.Talos.Patches}, {"controlPlane.patches", s.ControlPlane.Patches}}
	for i, p := range s.Pools {
		out = append(out, struct {
			field string
			list  []Patch
		}{fmt.Sprintf("pools[%d].patches", i), p.Patches})
	}
	return out
}

// patchName names patch i of a list at field.
func patchName(field string, i int, p Patch) string {
	name := fmt.Sprintf("%s[%d]", field, i)
	if f, ok := p.File(); ok {
		name += " (@" + f + ")"
	}
	return name
}

// PatchesFor lists the patches of a node group in the order they apply:
// talos.patches (every node), then controlPlane.patches or the pool's.
func (s *Spec) PatchesFor(pool string) ([]NamedPatch, error) {
	var out []NamedPatch
	add := func(field string, list []Patch) error {
		for i, p := range list {
			d, err := p.Data()
			if err != nil {
				return fmt.Errorf("%s: %w", patchName(field, i, p), err)
			}
			out = append(out, NamedPatch{Name: patchName(field, i, p), Data: d})
		}
		return nil
	}
	if err := add("talos.patches", s.Talos.Patches); err != nil {
		return nil, err
	}
	if pool == RoleControlPlane {
		return out, add("controlPlane.patches", s.ControlPlane.Patches)
	}
	for i, p := range s.Pools {
		if p.Name == pool {
			return out, add(fmt.Sprintf("pools[%d].patches", i), p.Patches)
		}
	}
	return out, nil
}

// validatePatches checks that every patch is a map, a list or "@PATH",
// and that machinery's configpatcher reads it (a file only once read).
func (s *Spec) validatePatches(add func(field, reason, fix string)) {
	for _, l := range s.patchLists() {
		for i, p := range l.list {
			field := fmt.Sprintf("%s[%d]", l.field, i)
			switch {
			case p.node.Kind == yaml.MappingNode || p.node.Kind == yaml.SequenceNode:
			case p.node.Kind == yaml.ScalarNode && strings.HasPrefix(p.node.Value, "@"):
				if strings.TrimPrefix(p.node.Value, "@") == "" {
					add(field, `"@" names no file`, `write "@PATH", a file relative to the spec's folder, e.g. "@patches/cp.yaml"`)
				}
				if p.data == nil {
					continue
				}
			default:
				add(field, fmt.Sprintf("%q is neither a map, a list nor \"@PATH\" (line %d)", p.node.Value, p.node.Line),
					`write a map (strategic merge patch, e.g. {machine: {time: {servers: [time.cloudflare.com]}}}), a list of JSON 6902 operations, or "@PATH" for a file beside the spec`)
				continue
			}
			if r := checkPatch(p); r != "" {
				add(patchName(l.field, i, p), r, "write a Talos machine-config patch: keys of the v1alpha1 config (machine, cluster) or typed documents for a strategic merge patch, or JSON 6902 operations (op, path, value) on the v1alpha1 document")
			}
		}
	}
}

// checkPatch is why machinery's configpatcher does not read p, or "".
func checkPatch(p Patch) string {
	d, err := p.Data()
	if err != nil {
		return err.Error()
	}
	if _, err := configpatcher.LoadPatch(d); err != nil {
		return "not a Talos machine-config patch: " + oneLine(err.Error())
	}
	return ""
}

// oneLine folds a multi-line message.
func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}

// LoadPatchFiles reads every "@PATH" patch relative to dir (the spec
// file's folder) and checks it; every problem is returned at once.
func (s *Spec) LoadPatchFiles(dir string) Problems {
	var ps Problems
	for _, l := range s.patchLists() {
		for i := range l.list {
			p := &l.list[i]
			f, ok := p.File()
			if !ok || f == "" {
				continue
			}
			path := f
			if !filepath.IsAbs(path) {
				path = filepath.Join(dir, f)
			}
			b, err := os.ReadFile(path)
			if err != nil {
				ps = append(ps, Problem{Field: patchName(l.field, i, *p), Reason: "cannot read the patch file: " + err.Error(),
					Fix: "create the file, or fix the path: it is relative to the spec file's folder (" + dir + ")"})
				continue
			}
			p.data = b
			if r := checkPatch(*p); r != "" {
				ps = append(ps, Problem{Field: patchName(l.field, i, *p), Reason: r,
					Fix: "the file must hold a strategic merge patch (one or more YAML documents) or a list of JSON 6902 operations"})
			}
		}
	}
	return ps
}

// patchFileData is the content of every patch file, in order, for Hash:
// a changed file changes the spec's fingerprint.
func (s *Spec) patchFileData() []byte {
	var b bytes.Buffer
	for _, l := range s.patchLists() {
		for _, p := range l.list {
			if f, ok := p.File(); ok {
				b.WriteString("\n# patch @" + f + "\n")
				b.Write(p.data)
			}
		}
	}
	return b.Bytes()
}
