package kubefake

import (
	"fmt"
	"net/http"
	"slices"
	"strings"
)

// applyLocked is server-side apply: creates the object, or merges the
// applied configuration into it, tracking which fields each manager applied.
//
// Approximation of structured-merge-diff: a field is a path of map keys
// down to a scalar, a list or an empty map (lists are atomic); a manager
// owns the fields of its last applied configuration; fields it stops
// applying are removed unless another apply manager owns them; a field
// another manager owns with a different value is a conflict unless force.
func (s *Server) applyLocked(ri reqInfo, body []byte, po patchOpts) (obj, int, error) {
	if po.manager == "" {
		return nil, 0, errInvalid("PatchOptions.meta.k8s.io", "", "fieldManager", "FieldValueRequired", "Required value: is required for apply patch")
	}

	cfg, err := decodeApply(body)
	if err != nil {
		return nil, 0, err
	}

	if err := checkBody(ri.res, ri.ns, ri.name, cfg); err != nil {
		return nil, 0, err
	}

	if str(cfg, "apiVersion") == "" || str(cfg, "kind") == "" {
		return nil, 0, errBadRequest("invalid object type: apiVersion and kind must be set in an apply configuration")
	}

	set(cfg, ri.name, "metadata", "name")

	paths := fieldPaths(cfg, "")
	old, exists := s.getLocked(ri.res, ri.ns, ri.name)

	if !exists {
		if ri.sub != "" {
			return nil, 0, errNotFound(ri.res, ri.name)
		}

		o, err := s.createLocked(ri.res, ri.ns, cfg, createOpts{dryRun: po.dryRun})
		if err != nil {
			return nil, 0, err
		}

		if !po.dryRun {
			s.recordApplyLocked(ri.res, o, po.manager, paths)
		}

		return o, http.StatusCreated, nil
	}

	uid := str(old, "metadata", "uid")
	owners := s.applied[uid]

	if conflicts := applyConflicts(owners, po.manager, paths, old, cfg); len(conflicts) > 0 && !po.force {
		return nil, 0, conflictError(ri.res, ri.name, conflicts)
	}

	next := copyObj(old)

	for _, p := range owners[po.manager] {
		if !slices.Contains(paths, p) && !ownedByOther(owners, po.manager, p) {
			removePath(next, p)
		}
	}

	next = mergeApplied(next, cfg)
	meta(next)["resourceVersion"] = str(old, "metadata", "resourceVersion")

	o, err := s.updateLocked(ri.res, ri.ns, ri.name, next, updateOpts{sub: ri.sub, dryRun: po.dryRun, apply: true})
	if err != nil {
		return nil, 0, err
	}

	if !po.dryRun {
		if po.force {
			for m, ps := range owners {
				if m != po.manager {
					owners[m] = slices.DeleteFunc(ps, func(p string) bool { return slices.Contains(paths, p) })
				}
			}
		}

		o = s.recordApplyLocked(ri.res, o, po.manager, paths)
	}

	return o, http.StatusOK, nil
}

type applyConflict struct{ manager, field string }

func applyConflicts(owners map[string][]string, manager string, paths []string, old, cfg obj) []applyConflict {
	var out []applyConflict

	for _, m := range sortedKeys(owners) {
		if m == manager {
			continue
		}

		for _, p := range owners[m] {
			if slices.Contains(paths, p) && !equal(valueAt(old, p), valueAt(cfg, p)) {
				out = append(out, applyConflict{m, p})
			}
		}
	}

	return out
}

func conflictError(r resource, name string, cs []applyConflict) *apiError {
	var (
		msgs   []string
		causes []any
	)

	for _, c := range cs {
		msgs = append(msgs, fmt.Sprintf("conflict with %q: %s", c.manager, c.field))
		causes = append(causes, obj{"reason": "FieldManagerConflict", "message": fmt.Sprintf("conflict with %q", c.manager), "field": c.field})
	}

	noun := "conflict"
	if len(cs) > 1 {
		noun = "conflicts"
	}

	return &apiError{http.StatusConflict, "Conflict", fmt.Sprintf("Apply failed with %d %s: %s", len(cs), noun, strings.Join(msgs, "\n")),
		map[string]any{"name": name, "group": r.group, "kind": r.name, "causes": causes}}
}

func ownedByOther(owners map[string][]string, manager, p string) bool {
	for m, ps := range owners {
		if m != manager && slices.Contains(ps, p) {
			return true
		}
	}

	return false
}

// recordApplyLocked stores the manager's fields and renders managedFields.
func (s *Server) recordApplyLocked(r resource, o obj, manager string, paths []string) obj {
	uid := str(o, "metadata", "uid")
	if s.applied[uid] == nil {
		s.applied[uid] = map[string][]string{}
	}

	s.applied[uid][manager] = paths

	var mf []any

	for _, m := range sortedKeys(s.applied[uid]) {
		mf = append(mf, obj{
			"manager": m, "operation": "Apply", "apiVersion": r.apiVersion(), "time": s.timestamp(),
			"fieldsType": "FieldsV1", "fieldsV1": fieldsV1(s.applied[uid][m]),
		})
	}

	stored, ok := s.getLocked(r, str(o, "metadata", "namespace"), str(o, "metadata", "name"))
	if !ok {
		return o
	}

	// managedFields change no resourceVersion here: they are bookkeeping.
	meta(stored)["managedFields"] = mf
	meta(o)["managedFields"] = deepCopy(mf)

	return o
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}

	slices.Sort(out)

	return out
}

// fieldPaths lists the leaf fields of an applied configuration as
// ".spec.replicas"-style paths; identity fields are not owned.
func fieldPaths(v any, prefix string) []string {
	m, ok := v.(map[string]any)
	if !ok || len(m) == 0 {
		return []string{prefix}
	}

	var out []string

	for _, k := range sortedKeys(m) {
		p := prefix + "." + k
		if p == ".apiVersion" || p == ".kind" || p == ".metadata.name" || p == ".metadata.namespace" {
			continue
		}

		for _, fp := range fieldPaths(m[k], p) {
			if fp != ".metadata" {
				out = append(out, fp)
			}
		}
	}

	return out
}

func splitPath(p string) []string { return strings.Split(strings.TrimPrefix(p, "."), ".") }

func valueAt(o obj, p string) any { return nested(o, splitPath(p)...) }

// removePath deletes a field and the maps it leaves empty.
func removePath(o obj, p string) {
	parts := splitPath(p)

	var walk func(m map[string]any, i int)

	walk = func(m map[string]any, i int) {
		if i == len(parts)-1 {
			delete(m, parts[i])

			return
		}

		child, ok := m[parts[i]].(map[string]any)
		if !ok {
			return
		}

		walk(child, i+1)

		if len(child) == 0 {
			delete(m, parts[i])
		}
	}

	walk(o, 0)
}

// mergeApplied merges maps recursively; lists and scalars replace.
func mergeApplied(target obj, cfg obj) obj {
	for k, v := range cfg {
		cm, isMap := v.(map[string]any)
		tm, tIsMap := target[k].(map[string]any)

		if isMap && tIsMap && len(cm) > 0 {
			target[k] = mergeApplied(tm, cm)

			continue
		}

		target[k] = deepCopy(v)
	}

	return target
}

// fieldsV1 renders owned paths in the managedFields FieldsV1 format.
func fieldsV1(paths []string) obj {
	root := obj{}

	for _, p := range paths {
		cur := root
		for _, part := range splitPath(p) {
			next, ok := cur["f:"+part].(map[string]any)
			if !ok {
				next = obj{}
				cur["f:"+part] = next
			}

			cur = next
		}
	}

	return root
}
