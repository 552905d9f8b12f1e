package kubefake

import (
	"fmt"
	"io"
	"mime"
	"net/http"
	"strings"
)

// serveScale is the scale subresource (autoscaling/v1 Scale) of
// deployments, replicasets, statefulsets and replicationcontrollers: what
// `kubectl scale` reads and writes.
func (s *Server) serveScale(w http.ResponseWriter, r *http.Request, ri reqInfo, dryRun bool) {
	s.mu.Lock()
	defer s.mu.Unlock()

	o, ok := s.getLocked(ri.res, ri.ns, ri.name)
	if !ok {
		writeErr(w, errNotFound(ri.res, ri.name))

		return
	}

	switch r.Method {
	case http.MethodGet:
		writeJSON(w, http.StatusOK, scaleOf(o))

		return
	case http.MethodPut, http.MethodPatch:
	default:
		writeErr(w, errMethodNotAllowed(r.Method, ri.res))

		return
	}

	b, err := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	if err != nil {
		writeErr(w, errBadRequest(err.Error()))

		return
	}

	cur := scaleOf(o)
	next := any(cur)

	ct, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type")) //nolint:errcheck // "" on error

	switch {
	case r.Method == http.MethodPut && (ct == "" || ct == "application/json"):
		err = decodeJSON(b, &next)
	case ct == mergePatch || ct == strategicPatch:
		var p any
		if err = decodeJSON(b, &p); err == nil {
			next = mergeValue(cur, p)
		}
	case ct == jsonPatch:
		var ops []any
		if err = decodeJSON(b, &ops); err == nil {
			next, err = applyJSONPatch(cur, ops)
		}
	default:
		writeErr(w, errUnsupportedMedia(ct))

		return
	}

	if err != nil {
		writeErr(w, errBadRequest(err.Error()))

		return
	}

	if rv := str(next, "metadata", "resourceVersion"); rv != "" && rv != str(o, "metadata", "resourceVersion") {
		writeErr(w, errConflict(ri.res, ri.name))

		return
	}

	replicas, ok := intAt(next, "spec", "replicas")
	if !ok || replicas < 0 {
		writeErr(w, errInvalid("Scale.autoscaling", ri.name, "spec.replicas", "FieldValueInvalid",
			fmt.Sprintf("Invalid value: %v: must be greater than or equal to 0", nested(next, "spec", "replicas"))))

		return
	}

	upd := copyObj(o)
	set(upd, num(replicas), "spec", "replicas")

	got, err := s.updateLocked(ri.res, ri.ns, ri.name, upd, updateOpts{dryRun: dryRun})
	if err != nil {
		writeErr(w, err)

		return
	}

	writeJSON(w, http.StatusOK, scaleOf(got))
}

func scaleOf(o obj) obj {
	replicas, _ := intAt(o, "spec", "replicas")
	have, _ := intAt(o, "status", "replicas")

	var sel []string

	for _, r := range mustSelector(mapAt(o, "spec", "selector")) {
		if r.op != "=" {
			continue
		}

		sel = append(sel, r.key+"="+strings.Join(r.values, ","))
	}

	m := mapAt(o, "metadata")

	return obj{
		"kind": "Scale", "apiVersion": "autoscaling/v1",
		"metadata": obj{
			"name": m["name"], "namespace": m["namespace"], "uid": m["uid"],
			"resourceVersion": m["resourceVersion"], "creationTimestamp": m["creationTimestamp"],
		},
		"spec":   obj{"replicas": num(replicas)},
		"status": obj{"replicas": num(have), "selector": strings.Join(sel, ",")},
	}
}

func mustSelector(m map[string]any) labelSelector {
	sel, _ := selectorFromObject(m) //nolint:errcheck // nil selects nothing

	return sel
}
