package spec

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"go.yaml.in/yaml/v3"
)

// saveHeader opens a spec file that Save creates.
const saveHeader = "# ohmytalos cluster spec: see docs/spec.md. Holds references to secrets, never their values.\n"

// Save writes the spec to path (mode 0644 for a new file: it holds no
// secret values; an existing file keeps its mode). An existing file keeps
// the operator's comments, key order and layout: its YAML tree is updated
// in place, value by value. The write is atomic: a temporary file in the
// same folder, flushed to disk, then renamed over the old one, so a crash
// leaves either the old file or the new one, never a truncated one.
func (s *Spec) Save(path string) error { return s.save(path, writeAll) }

// save is Save with the writer of the temporary file given (tests crash it).
func (s *Spec) save(path string, write func(*os.File, []byte) error) error {
	fresh, err := s.Marshal()
	if err != nil {
		return err
	}
	mode := fs.FileMode(0o644)
	out := append([]byte(saveHeader), fresh...)
	old, err := os.ReadFile(path)
	switch {
	case err == nil:
		if st, err := os.Stat(path); err == nil {
			mode = st.Mode().Perm()
		}
		if merged, ok := mergeInto(old, fresh); ok && sameSpec(merged, fresh) {
			out = merged
		}
	case !errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("read %s to keep its comments: %w", path, err)
	}
	return writeAtomic(path, out, mode, write)
}

// mergeInto updates the YAML tree of old with the values of fresh and
// encodes it; false when old is not a YAML mapping document (then fresh
// replaces it whole).
func mergeInto(old, fresh []byte) ([]byte, bool) {
	var oldDoc, freshDoc yaml.Node
	if yaml.Unmarshal(old, &oldDoc) != nil || yaml.Unmarshal(fresh, &freshDoc) != nil {
		return nil, false
	}
	if len(oldDoc.Content) != 1 || oldDoc.Content[0].Kind != yaml.MappingNode || len(freshDoc.Content) != 1 {
		return nil, false
	}
	mergeNode(oldDoc.Content[0], freshDoc.Content[0])
	var b bytes.Buffer
	enc := yaml.NewEncoder(&b)
	enc.SetIndent(2)
	if err := enc.Encode(&oldDoc); err != nil {
		return nil, false
	}
	if err := enc.Close(); err != nil {
		return nil, false
	}
	return b.Bytes(), true
}

// sameSpec reports whether two encodings decode to the same spec: the
// merged file is written only when it says exactly what the spec says.
func sameSpec(a, b []byte) bool {
	sa, err := Decode(a)
	if err != nil {
		return false
	}
	sb, err := Decode(b)
	if err != nil {
		return false
	}
	ma, errA := sa.Marshal()
	mb, errB := sb.Marshal()
	return errA == nil && errB == nil && bytes.Equal(ma, mb)
}

// mergeNode makes dst hold src's value while keeping dst's comments:
// mappings key by key (keys gone from src are removed, new ones appended
// in src's order), sequences element by element (by "name" when the
// elements are named mappings, as pools are), scalars replaced when their
// value differs.
func mergeNode(dst, src *yaml.Node) {
	if dst.Kind != src.Kind {
		replaceKeepingComments(dst, src)
		return
	}
	switch dst.Kind {
	case yaml.MappingNode:
		mergeMapping(dst, src)
	case yaml.SequenceNode:
		mergeSequence(dst, src)
	default:
		if dst.Value != src.Value || dst.Tag != src.Tag {
			// The operator's quoting stays unless the type changed or the
			// encoder needs its own (a block scalar, a quoted number).
			if dst.Tag != src.Tag || src.Style != 0 || dst.Style&(yaml.LiteralStyle|yaml.FoldedStyle) != 0 {
				dst.Style = src.Style
			}
			dst.Value, dst.Tag = src.Value, src.Tag
		}
	}
}

func mergeMapping(dst, src *yaml.Node) {
	var out []*yaml.Node
	used := map[string]bool{}
	for i := 0; i+1 < len(dst.Content); i += 2 {
		k, v := dst.Content[i], dst.Content[i+1]
		sv := mappingValue(src, k.Value)
		if sv == nil {
			continue // no longer in the spec
		}
		mergeNode(v, sv)
		used[k.Value] = true
		out = append(out, k, v)
	}
	kept := len(out)
	for i := 0; i+1 < len(src.Content); i += 2 {
		if !used[src.Content[i].Value] {
			out = append(out, src.Content[i], src.Content[i+1])
		}
	}
	// A comment closing the mapping stays at its end, after new keys.
	if kept > 0 && len(out) > kept && out[kept-2].FootComment != "" {
		out[len(out)-2].FootComment, out[kept-2].FootComment = out[kept-2].FootComment, ""
	}
	dst.Content = out
}

func mergeSequence(dst, src *yaml.Node) {
	out := make([]*yaml.Node, 0, len(src.Content))
	for i, se := range src.Content {
		var de *yaml.Node
		if name := nodeName(se); name != "" {
			for _, c := range dst.Content {
				if nodeName(c) == name {
					de = c
				}
			}
		} else if i < len(dst.Content) && nodeName(dst.Content[i]) == "" {
			de = dst.Content[i]
		}
		if de == nil {
			out = append(out, se)
			continue
		}
		mergeNode(de, se)
		out = append(out, de)
	}
	dst.Content = out
}

// nodeName is the "name" of a mapping element ("" when it has none).
func nodeName(n *yaml.Node) string {
	if n.Kind != yaml.MappingNode {
		return ""
	}
	if v := mappingValue(n, "name"); v != nil && v.Kind == yaml.ScalarNode {
		return v.Value
	}
	return ""
}

func replaceKeepingComments(dst, src *yaml.Node) {
	head, line, foot := dst.HeadComment, dst.LineComment, dst.FootComment
	*dst = *src
	dst.HeadComment, dst.LineComment, dst.FootComment = head, line, foot
}

// writeAll writes data to f, the production writer of writeAtomic.
func writeAll(f *os.File, data []byte) error {
	_, err := f.Write(data)
	return err
}

// writeAtomic replaces path with data: a temporary file in the same
// folder, written by write, synced, given mode, then renamed over path and
// the folder synced. On any error the temporary file is removed and path
// is untouched.
func writeAtomic(path string, data []byte, mode fs.FileMode, write func(*os.File, []byte) error) (err error) {
	dir := filepath.Dir(path)
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return fmt.Errorf("create a temporary file beside %s: %w", path, err)
	}
	tmp := f.Name()
	defer func() {
		if err != nil {
			_ = f.Close()
			_ = os.Remove(tmp)
		}
	}()
	if err := write(f, data); err != nil {
		return fmt.Errorf("write %s: %w", tmp, err)
	}
	if err := f.Sync(); err != nil {
		return fmt.Errorf("flush %s: %w", tmp, err)
	}
	if err := f.Chmod(mode); err != nil {
		return fmt.Errorf("set the mode of %s: %w", tmp, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("close %s: %w", tmp, err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("replace %s: %w", path, err)
	}
	if d, err := os.Open(dir); err == nil {
		_ = d.Sync() // the rename is durable once the folder is; best effort where folders cannot sync
		_ = d.Close()
	}
	return nil
}
