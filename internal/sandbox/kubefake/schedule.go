package kubefake

import (
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
)

// tolerates reports whether a pod's tolerations tolerate a taint
// (k8s.io/api/core/v1 Toleration.ToleratesTaint).
func tolerates(tols []any, taint any) bool {
	for _, t := range tols {
		if e := str(t, "effect"); e != "" && e != str(taint, "effect") {
			continue
		}

		key, op := str(t, "key"), str(t, "operator")
		if key == "" && op == "Exists" {
			return true
		}

		if key != str(taint, "key") {
			continue
		}

		if op == "Exists" || str(t, "value") == str(taint, "value") {
			return true
		}
	}

	return false
}

// untolerated returns the first NoSchedule/NoExecute taint of the node the
// pod spec does not tolerate, or nil.
func untolerated(spec map[string]any, node obj, extra []any) map[string]any {
	tols := append(slices.Clone(listAt(spec, "tolerations")), extra...)

	for _, t := range listAt(node, "spec", "taints") {
		if e := str(t, "effect"); e != "NoSchedule" && e != "NoExecute" {
			continue
		}

		if !tolerates(tols, t) {
			m, _ := t.(map[string]any) //nolint:errcheck // taints are objects

			return m
		}
	}

	return nil
}

// nodeMatches checks nodeSelector and required node affinity.
func nodeMatches(spec map[string]any, node obj) bool {
	labels := strMap(node, "metadata", "labels")

	for k, v := range strMap(spec, "nodeSelector") {
		if labels[k] != v {
			return false
		}
	}

	terms := listAt(spec, "affinity", "nodeAffinity", "requiredDuringSchedulingIgnoredDuringExecution", "nodeSelectorTerms")
	if len(terms) == 0 {
		return true
	}

	fields := map[string]string{"metadata.name": str(node, "metadata", "name")}

	return slices.ContainsFunc(terms, func(term any) bool {
		return exprsMatch(listAt(term, "matchExpressions"), labels) && exprsMatch(listAt(term, "matchFields"), fields)
	})
}

func exprsMatch(exprs []any, labels map[string]string) bool {
	for _, e := range exprs {
		v, has := labels[str(e, "key")]

		var vals []string
		for _, x := range listAt(e, "values") {
			s, _ := x.(string) //nolint:errcheck // non-strings never match
			vals = append(vals, s)
		}

		ok := false

		switch str(e, "operator") {
		case "In":
			ok = has && slices.Contains(vals, v)
		case "NotIn":
			ok = !has || !slices.Contains(vals, v)
		case "Exists":
			ok = has
		case "DoesNotExist":
			ok = !has
		case "Gt", "Lt":
			a, err1 := strconv.Atoi(v)

			b := 0
			if len(vals) == 1 {
				b, _ = strconv.Atoi(vals[0]) //nolint:errcheck // 0 on error
			}

			ok = has && err1 == nil && ((str(e, "operator") == "Gt" && a > b) || (str(e, "operator") == "Lt" && a < b))
		}

		if !ok {
			return false
		}
	}

	return true
}

// scheduleLocked is kube-scheduler for one pod spec: the feasible node with
// the fewest pods of the same owner, then the fewest pods, then by name;
// "" and the reason message (as in the PodScheduled condition) otherwise.
func (s *Server) scheduleLocked(spec map[string]any, ownerUID string) (string, string) {
	nodes := s.sortedLocked("/nodes")
	reasons := map[string]int{}

	type cand struct {
		name        string
		mine, total int
	}

	var cands []cand

	for _, n := range nodes {
		switch t := untolerated(spec, n, nil); {
		case str(n, "metadata", "deletionTimestamp") != "":
			reasons["node(s) were being deleted"]++
		case !nodeMatches(spec, n):
			reasons["node(s) didn't match Pod's node affinity/selector"]++
		case t != nil:
			reasons[fmt.Sprintf("node(s) had untolerated taint {%s: %s}", str(t, "key"), str(t, "value"))]++
		default:
			c := cand{name: str(n, "metadata", "name")}

			for _, p := range s.sortedLocked("/pods") {
				if str(p, "spec", "nodeName") == c.name {
					c.total++

					if str(controllerOf(p), "uid") == ownerUID {
						c.mine++
					}
				}
			}

			cands = append(cands, c)
		}
	}

	if len(cands) == 0 {
		var parts []string
		for r, n := range reasons {
			parts = append(parts, fmt.Sprintf("%d %s", n, r))
		}

		sort.Strings(parts)

		return "", fmt.Sprintf("0/%d nodes are available: %s. preemption: 0/%d nodes are available: %d Preemption is not helpful for scheduling.",
			len(nodes), strings.Join(parts, ", "), len(nodes), len(nodes))
	}

	slices.SortStableFunc(cands, func(a, b cand) int {
		if a.mine != b.mine {
			return a.mine - b.mine
		}

		return a.total - b.total
	})

	return cands[0].name, ""
}

// daemonSetTolerations are the tolerations the DaemonSet controller adds to
// its pods (pkg/controller/daemon/util AddOrUpdateDaemonPodTolerations).
func daemonSetTolerations(spec map[string]any) []any {
	tols := []any{
		obj{"key": taintNotReady, "operator": "Exists", "effect": "NoExecute"},
		obj{"key": taintUnreachable, "operator": "Exists", "effect": "NoExecute"},
		obj{"key": "node.kubernetes.io/disk-pressure", "operator": "Exists", "effect": "NoSchedule"},
		obj{"key": "node.kubernetes.io/memory-pressure", "operator": "Exists", "effect": "NoSchedule"},
		obj{"key": "node.kubernetes.io/pid-pressure", "operator": "Exists", "effect": "NoSchedule"},
		obj{"key": taintUnschedulable, "operator": "Exists", "effect": "NoSchedule"},
	}
	if boolAt(spec, "hostNetwork") {
		tols = append(tols, obj{"key": "node.kubernetes.io/network-unavailable", "operator": "Exists", "effect": "NoSchedule"})
	}

	return tols
}
