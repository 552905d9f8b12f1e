package kubefake

import (
	"fmt"
	"io"
	"mime"
	"net/http"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

const (
	mergePatch     = "application/merge-patch+json"
	jsonPatch      = "application/json-patch+json"
	strategicPatch = "application/strategic-merge-patch+json"
	applyPatch     = "application/apply-patch+yaml"
)

func (s *Server) servePatch(w http.ResponseWriter, r *http.Request, ri reqInfo, dryRun bool) {
	ct, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type")) //nolint:errcheck // "" on error

	b, err := io.ReadAll(io.LimitReader(r.Body, 3<<20))
	if err != nil {
		writeErr(w, errBadRequest("read request body: "+err.Error()))

		return
	}

	q := r.URL.Query()

	s.mu.Lock()
	o, code, err := s.patchLocked(ri, ct, b, patchOpts{
		manager: q.Get("fieldManager"), force: q.Get("force") == "true", dryRun: dryRun,
	})
	s.mu.Unlock()

	if err != nil {
		writeErr(w, err)

		return
	}

	writeJSON(w, code, s.render(ri.res, o))
}

type patchOpts struct {
	manager string
	force   bool
	dryRun  bool
}

func (s *Server) patchLocked(ri reqInfo, ct string, body []byte, po patchOpts) (obj, int, error) {
	if ct == applyPatch {
		return s.applyLocked(ri, body, po)
	}

	old, ok := s.getLocked(ri.res, ri.ns, ri.name)
	if !ok {
		return nil, 0, errNotFound(ri.res, ri.name)
	}

	var (
		patched any
		err     error
	)

	switch ct {
	case mergePatch:
		var p any
		if err := decodeJSON(body, &p); err != nil {
			return nil, 0, errBadRequest(err.Error())
		}

		patched = mergeValue(copyObj(old), p)
	case jsonPatch:
		var ops []any
		if err := decodeJSON(body, &ops); err != nil {
			return nil, 0, errBadRequest(err.Error())
		}

		patched, err = applyJSONPatch(copyObj(old), ops)
		if err != nil {
			return nil, 0, &apiError{code: http.StatusUnprocessableEntity, reason: "Invalid", message: err.Error()}
		}
	case strategicPatch:
		if ri.res.crd {
			return nil, 0, errUnsupportedMedia(ct)
		}

		var p any
		if err := decodeJSON(body, &p); err != nil {
			return nil, 0, errBadRequest(err.Error())
		}

		patched = strategicMerge(copyObj(old), p, "")
	default:
		return nil, 0, errUnsupportedMedia(ct)
	}

	po2, ok := patched.(map[string]any)
	if !ok {
		return nil, 0, errBadRequest("the patch did not produce an object")
	}

	o, err := s.updateLocked(ri.res, ri.ns, ri.name, po2, updateOpts{sub: ri.sub, dryRun: po.dryRun})
	if err != nil {
		return nil, 0, err
	}

	return o, http.StatusOK, nil
}

// mergeValue applies an RFC 7386 JSON merge patch.
func mergeValue(target, patch any) any {
	pm, ok := patch.(map[string]any)
	if !ok {
		return deepCopy(patch)
	}

	tm, ok := target.(map[string]any)
	if !ok {
		tm = map[string]any{}
	}

	for k, v := range pm {
		if v == nil {
			delete(tm, k)

			continue
		}

		tm[k] = mergeValue(tm[k], v)
	}

	return tm
}

// applyJSONPatch applies an RFC 6902 JSON patch.
func applyJSONPatch(doc any, ops []any) (any, error) {
	for _, raw := range ops {
		op, _ := raw.(map[string]any) //nolint:errcheck // checked by the switch
		path := str(op, "path")

		var err error

		switch str(op, "op") {
		case "add":
			doc, err = pointerSet(doc, path, deepCopy(op["value"]), true)
		case "replace":
			if _, err = pointerGet(doc, path); err == nil {
				doc, err = pointerSet(doc, path, deepCopy(op["value"]), false)
			}
		case "remove":
			doc, err = pointerRemove(doc, path)
		case "test":
			var v any
			if v, err = pointerGet(doc, path); err == nil && !equal(v, op["value"]) {
				err = fmt.Errorf("testing value %s failed", path)
			}
		case "move", "copy":
			var v any
			if v, err = pointerGet(doc, str(op, "from")); err == nil {
				if str(op, "op") == "move" {
					doc, err = pointerRemove(doc, str(op, "from"))
				}

				if err == nil {
					doc, err = pointerSet(doc, path, deepCopy(v), true)
				}
			}
		default:
			err = fmt.Errorf("unexpected kind: %s", str(op, "op"))
		}

		if err != nil {
			return nil, err
		}
	}

	return doc, nil
}

func pointerTokens(p string) []string {
	if p == "" {
		return nil
	}

	toks := strings.Split(strings.TrimPrefix(p, "/"), "/")
	for i, t := range toks {
		toks[i] = strings.ReplaceAll(strings.ReplaceAll(t, "~1", "/"), "~0", "~")
	}

	return toks
}

func pointerGet(doc any, p string) (any, error) {
	cur := doc

	for _, t := range pointerTokens(p) {
		switch c := cur.(type) {
		case map[string]any:
			v, ok := c[t]
			if !ok {
				return nil, fmt.Errorf("doc is missing path: %q", p)
			}

			cur = v
		case []any:
			i, err := strconv.Atoi(t)
			if err != nil || i < 0 || i >= len(c) {
				return nil, fmt.Errorf("doc is missing path: %q", p)
			}

			cur = c[i]
		default:
			return nil, fmt.Errorf("doc is missing path: %q", p)
		}
	}

	return cur, nil
}

// pointerSet sets (insert=true: adds, inserting into arrays) the value at p.
func pointerSet(doc any, p string, v any, insert bool) (any, error) {
	toks := pointerTokens(p)
	if len(toks) == 0 {
		return v, nil
	}

	parent, err := pointerGet(doc, "/"+strings.Join(escapeAll(toks[:len(toks)-1]), "/"))
	if len(toks) == 1 {
		parent, err = doc, nil
	}

	if err != nil {
		return nil, err
	}

	last := toks[len(toks)-1]

	switch c := parent.(type) {
	case map[string]any:
		c[last] = v

		return doc, nil
	case []any:
		i := len(c)
		if last != "-" {
			if i, err = strconv.Atoi(last); err != nil || i < 0 || i > len(c) || (!insert && i == len(c)) {
				return nil, fmt.Errorf("add operation does not apply: doc is missing path: %q", p)
			}
		}

		var nl []any
		if insert {
			nl = append(append(append([]any{}, c[:i]...), v), c[i:]...)
		} else {
			nl = append([]any{}, c...)
			nl[i] = v
		}

		return pointerSet(doc, "/"+strings.Join(escapeAll(toks[:len(toks)-1]), "/"), nl, false)
	}

	return nil, fmt.Errorf("doc is missing path: %q", p)
}

func pointerRemove(doc any, p string) (any, error) {
	toks := pointerTokens(p)
	if len(toks) == 0 {
		return nil, fmt.Errorf("cannot remove the whole document")
	}

	parentPath := "/" + strings.Join(escapeAll(toks[:len(toks)-1]), "/")

	parent := doc
	if len(toks) > 1 {
		var err error
		if parent, err = pointerGet(doc, parentPath); err != nil {
			return nil, err
		}
	}

	last := toks[len(toks)-1]

	switch c := parent.(type) {
	case map[string]any:
		if _, ok := c[last]; !ok {
			return nil, fmt.Errorf("remove operation does not apply: doc is missing path: %q", p)
		}

		delete(c, last)

		return doc, nil
	case []any:
		i, err := strconv.Atoi(last)
		if err != nil || i < 0 || i >= len(c) {
			return nil, fmt.Errorf("remove operation does not apply: doc is missing path: %q", p)
		}

		nl := append(append([]any{}, c[:i]...), c[i+1:]...)
		if len(toks) == 1 {
			return nl, nil
		}

		return pointerSet(doc, parentPath, nl, false)
	}

	return nil, fmt.Errorf("doc is missing path: %q", p)
}

func escapeAll(toks []string) []string {
	out := make([]string, len(toks))
	for i, t := range toks {
		out[i] = strings.ReplaceAll(strings.ReplaceAll(t, "~", "~0"), "/", "~1")
	}

	return out
}

// decodeApply reads an apply configuration (YAML or JSON).
func decodeApply(body []byte) (obj, error) {
	var raw any
	if err := yaml.Unmarshal(body, &raw); err != nil {
		return nil, errBadRequest(fmt.Sprintf("error decoding YAML: %v", err))
	}

	n, err := normalize(raw)
	if err != nil {
		return nil, errBadRequest(err.Error())
	}

	o, ok := n.(map[string]any)
	if !ok {
		return nil, errBadRequest("the apply configuration is not an object")
	}

	return o, nil
}
