package kubefake

import (
	"fmt"
	"math"
	"net/http"
	"strconv"
	"strings"
)

// serveEviction is POST pods/NAME/eviction (policy/v1 Eviction): the pod is
// deleted unless that would violate its PodDisruptionBudget, answered 429
// with kube-apiserver's message (pkg/registry/core/pod/storage/eviction.go).
func (s *Server) serveEviction(w http.ResponseWriter, r *http.Request, ri reqInfo) {
	// Typed clients send the Eviction as protobuf, which this server does
	// not decode: its only field that matters, the name, is in the URL.
	if !strings.HasPrefix(r.Header.Get("Content-Type"), "application/vnd.kubernetes.protobuf") {
		body, err := readBody(r)
		if err != nil {
			writeErr(w, err)

			return
		}

		if n := str(body, "metadata", "name"); n != "" && n != ri.name {
			writeErr(w, errBadRequest("name in URL does not match name in Eviction object"))

			return
		}
	}

	s.mu.Lock()
	err := s.evictLocked(ri.res, ri.ns, ri.name)
	s.mu.Unlock()

	if err != nil {
		writeErr(w, err)

		return
	}

	writeJSON(w, http.StatusCreated, obj{"kind": "Status", "apiVersion": "v1", "metadata": obj{}, "status": "Success", "code": http.StatusCreated})
}

func (s *Server) evictLocked(pods resource, ns, name string) error {
	pod, ok := s.getLocked(pods, ns, name)
	if !ok {
		return errNotFound(pods, name)
	}

	// Pods that are not running, or not ready, do not count against a budget
	// (the IfHealthyBudget policy's effect for an unready pod is simplified
	// to "allowed").
	phase := str(pod, "status", "phase")
	if phase == "Succeeded" || phase == "Failed" || phase == "Pending" || !podReady(pod) {
		_, err := s.deleteLocked(pods, ns, name, false)

		return err
	}

	var pdbs []obj

	for _, pdb := range s.sortedLocked("policy/poddisruptionbudgets") {
		if str(pdb, "metadata", "namespace") != ns {
			continue
		}

		sel, ok := selectorFromObject(mapAt(pdb, "spec", "selector"))
		if ok && sel.matches(strMap(pod, "metadata", "labels")) {
			pdbs = append(pdbs, pdb)
		}
	}

	if len(pdbs) > 1 {
		return &apiError{code: http.StatusInternalServerError, reason: "InternalError",
			message: "Internal error occurred: This pod has more than one PodDisruptionBudget, which the eviction subresource does not support."}
	}

	if len(pdbs) == 1 {
		b := s.budgetLocked(pdbs[0])
		if b.allowed <= 0 {
			return &apiError{http.StatusTooManyRequests, "TooManyRequests", "Cannot evict pod as it would violate the pod's disruption budget.",
				map[string]any{"causes": []any{obj{
					"reason":  "DisruptionBudget",
					"message": fmt.Sprintf("The disruption budget %s needs %d healthy pods and has %d currently", str(pdbs[0], "metadata", "name"), b.desired, b.healthy),
				}}}}
		}
	}

	_, err := s.deleteLocked(pods, ns, name, false)

	return err
}

type budget struct {
	expected, healthy, desired, allowed int64
}

// budgetLocked computes a PodDisruptionBudget's status from the pods its
// selector matches (the disruption controller takes the expected count from
// the owning controller's scale; here it is the number of matching pods).
func (s *Server) budgetLocked(pdb obj) budget {
	sel, ok := selectorFromObject(mapAt(pdb, "spec", "selector"))

	var b budget

	for _, p := range s.sortedLocked("/pods") {
		if !ok || str(p, "metadata", "namespace") != str(pdb, "metadata", "namespace") || !sel.matches(strMap(p, "metadata", "labels")) {
			continue
		}

		b.expected++

		if podReady(p) {
			b.healthy++
		}
	}

	if v := nested(pdb, "spec", "minAvailable"); v != nil {
		b.desired = scaled(v, b.expected)
	} else if v := nested(pdb, "spec", "maxUnavailable"); v != nil {
		b.desired = max(0, b.expected-scaled(v, b.expected))
	}

	b.allowed = max(0, b.healthy-b.desired)

	return b
}

// scaled reads an IntOrString: an integer, or a percentage of total rounded up.
func scaled(v any, total int64) int64 {
	if i, ok := toInt(v); ok {
		return i
	}

	s, _ := v.(string) //nolint:errcheck // 0 when neither
	if p, err := strconv.Atoi(strings.TrimSuffix(s, "%")); err == nil {
		return int64(math.Ceil(float64(p) * float64(total) / 100))
	}

	return 0
}

func podReady(p obj) bool {
	for _, c := range listAt(p, "status", "conditions") {
		if str(c, "type") == "Ready" {
			return str(c, "status") == "True"
		}
	}

	return false
}
