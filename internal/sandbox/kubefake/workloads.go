package kubefake

import (
	"encoding/json"
	"fmt"
	"hash/fnv"
	"net/netip"
	"slices"
)

// templateHash is the pod-template-hash / controller-revision-hash of a
// pod template: a stable digest in the controllers' alphabet.
func templateHash(tpl any) string {
	b, _ := json.Marshal(tpl) //nolint:errcheck // maps always encode
	h := fnv.New32a()
	_, _ = h.Write(b) //nolint:errcheck // hashes never fail

	const alphabet = "bcdfghjklmnpqrstvwxz2456789"

	n := h.Sum32()
	out := make([]byte, 10)

	for i := range out {
		out[i] = alphabet[n%uint32(len(alphabet))]
		n = n/uint32(len(alphabet)) + uint32(i)*7919
	}

	return string(out)
}

func ownerRef(o obj, apiVersion, kind string) obj {
	return obj{
		"apiVersion": apiVersion, "kind": kind, "name": str(o, "metadata", "name"),
		"uid": str(o, "metadata", "uid"), "controller": true, "blockOwnerDeletion": true,
	}
}

// ownedPodsLocked lists the pods controlled by the object with uid.
func (s *Server) ownedLocked(key, uid string) []obj {
	var out []obj

	for _, o := range s.sortedLocked(key) {
		if str(controllerOf(o), "uid") == uid {
			out = append(out, o)
		}
	}

	return out
}

// newPodLocked creates a pod from a template.
func (s *Server) newPodLocked(owner obj, apiVersion, kind string, tpl map[string]any, extraLabels map[string]any, nodeName string) {
	pod := obj{
		"metadata": obj{
			"generateName":    str(owner, "metadata", "name") + "-",
			"labels":          mergeValue(deepCopy(mapAt(tpl, "metadata", "labels")), extraLabels),
			"ownerReferences": []any{ownerRef(owner, apiVersion, kind)},
		},
		"spec": deepCopy(mapAt(tpl, "spec")),
	}

	if ann := mapAt(tpl, "metadata", "annotations"); ann != nil {
		set(pod, deepCopy(ann), "metadata", "annotations")
	}

	if nodeName != "" {
		set(pod, nodeName, "spec", "nodeName")
	}

	if _, err := s.createLocked(s.builtinLocked("pods"), str(owner, "metadata", "namespace"), pod, createOpts{}); err != nil {
		panic("kubefake: create pod: " + err.Error())
	}
}

func (s *Server) deletePodLocked(p obj) {
	_, _ = s.deleteLocked(s.builtinLocked("pods"), str(p, "metadata", "namespace"), str(p, "metadata", "name"), false) //nolint:errcheck // gone already is fine
}

// reconcileDaemonSetsLocked runs one pod per eligible node, replacing pods
// of an old template at once (an unbounded rolling update).
func (s *Server) reconcileDaemonSetsLocked() {
	dsRes := s.builtinLocked("daemonsets")

	for _, old := range s.sortedLocked(dsRes.key()) {
		ds := copyObj(old)
		tpl := mapAt(ds, "spec", "template")
		spec := mapAt(tpl, "spec")
		hash := templateHash(tpl)
		pods := s.ownedLocked("/pods", str(ds, "metadata", "uid"))

		byNode := map[string]obj{}

		for _, p := range pods {
			node := str(p, "spec", "nodeName")
			if _, dup := byNode[node]; dup || str(p, "metadata", "labels", "controller-revision-hash") != hash {
				s.deletePodLocked(p)

				continue
			}

			byNode[node] = p
		}

		var desired, current, ready, updated, misscheduled int64

		for _, n := range s.sortedLocked("/nodes") {
			name := str(n, "metadata", "name")
			eligible := nodeMatches(spec, n) && untolerated(spec, n, daemonSetTolerations(spec)) == nil
			p, has := byNode[name]

			switch {
			case eligible && !has:
				podSpec := mapAt(deepCopy(tpl), "spec")
				set(podSpec, append(slices.Clone(listAt(podSpec, "tolerations")), daemonSetTolerations(spec)...), "tolerations")
				set(podSpec, []any{obj{"matchFields": []any{obj{"key": "metadata.name", "operator": "In", "values": []any{name}}}}},
					"affinity", "nodeAffinity", "requiredDuringSchedulingIgnoredDuringExecution", "nodeSelectorTerms")
				s.newPodLocked(ds, "apps/v1", "DaemonSet", obj{"metadata": mapAt(tpl, "metadata"), "spec": podSpec},
					obj{"controller-revision-hash": hash, "pod-template-generation": fmt.Sprint(nested(ds, "metadata", "generation"))}, name)

				desired++
				current++
				updated++
			case eligible:
				desired++
				current++
				updated++

				if podReady(p) {
					ready++
				}
			case has:
				misscheduled++
			}
		}

		st := mapAt(ds, "status")
		if st == nil {
			st = obj{}
			ds["status"] = st
		}

		st["desiredNumberScheduled"], st["currentNumberScheduled"] = num(desired), num(current)
		st["numberReady"], st["numberAvailable"], st["updatedNumberScheduled"] = num(ready), num(ready), num(updated)
		st["numberMisscheduled"] = num(misscheduled)
		st["observedGeneration"] = nested(ds, "metadata", "generation")

		if desired-ready > 0 {
			st["numberUnavailable"] = num(desired - ready)
		} else {
			delete(st, "numberUnavailable")
		}

		s.saveLocked(dsRes, old, ds)
	}
}

// reconcileDeploymentsLocked keeps one ReplicaSet per Deployment for the
// current template at spec.replicas and scales the old ones to zero.
func (s *Server) reconcileDeploymentsLocked() {
	depRes, rsRes := s.builtinLocked("deployments"), s.builtinLocked("replicasets")

	for _, old := range s.sortedLocked(depRes.key()) {
		d := copyObj(old)
		tpl := mapAt(d, "spec", "template")
		hash := templateHash(tpl)
		rsName := str(d, "metadata", "name") + "-" + hash
		replicas, _ := intAt(d, "spec", "replicas")
		ns := str(d, "metadata", "namespace")

		if _, ok := s.getLocked(rsRes, ns, rsName); !ok {
			rsTpl := copyObj(tpl)
			set(rsTpl, hash, "metadata", "labels", "pod-template-hash")

			rs := obj{
				"metadata": obj{
					"name": rsName, "labels": mergeValue(deepCopy(mapAt(tpl, "metadata", "labels")), obj{"pod-template-hash": hash}),
					"ownerReferences": []any{ownerRef(d, "apps/v1", "Deployment")},
				},
				"spec": obj{"replicas": num(replicas), "selector": deepCopy(mapAt(d, "spec", "selector")), "template": rsTpl},
			}
			set(rs, hash, "spec", "selector", "matchLabels", "pod-template-hash")

			if _, err := s.createLocked(rsRes, ns, rs, createOpts{}); err != nil {
				panic("kubefake: create replicaset: " + err.Error())
			}
		}

		var total, ready, updated int64

		for _, rsOld := range s.ownedLocked(rsRes.key(), str(d, "metadata", "uid")) {
			rs := copyObj(rsOld)

			want := int64(0)
			if str(rs, "metadata", "name") == rsName {
				want = replicas
				updated, _ = intAt(rs, "status", "replicas")
			}

			set(rs, num(want), "spec", "replicas")
			s.saveLocked(rsRes, rsOld, rs)

			n, _ := intAt(rs, "status", "replicas")
			r, _ := intAt(rs, "status", "readyReplicas")
			total += n
			ready += r
		}

		s.deploymentStatus(d, rsName, replicas, total, ready, updated)
		s.saveLocked(depRes, old, d)
	}
}

func (s *Server) deploymentStatus(d obj, rsName string, replicas, total, ready, updated int64) {
	st := obj{
		"observedGeneration": nested(d, "metadata", "generation"),
		"replicas":           num(total), "updatedReplicas": num(updated),
		"readyReplicas": num(ready), "availableReplicas": num(ready),
	}
	if total-ready > 0 {
		st["unavailableReplicas"] = num(total - ready)
	}

	for k, v := range st {
		if n, ok := toInt(v); ok && n == 0 && k != "observedGeneration" {
			delete(st, k)
		}
	}

	st["conditions"] = listAt(d, "status", "conditions")
	d["status"] = st

	// maxUnavailable defaults to 25%, rounded down (deployment util).
	maxUnavail := replicas / 4
	if v := nested(d, "spec", "strategy", "rollingUpdate", "maxUnavailable"); v != nil {
		maxUnavail = scaledDown(v, replicas)
	}

	if ready >= replicas-maxUnavail {
		s.setCondition(d, "Available", "True", "MinimumReplicasAvailable", "Deployment has minimum availability.")
	} else {
		s.setCondition(d, "Available", "False", "MinimumReplicasUnavailable", "Deployment does not have minimum availability.")
	}

	if updated == replicas && ready == replicas && total == replicas {
		s.setCondition(d, "Progressing", "True", "NewReplicaSetAvailable", fmt.Sprintf("ReplicaSet %q has successfully progressed.", rsName))
	} else {
		s.setCondition(d, "Progressing", "True", "ReplicaSetUpdated", fmt.Sprintf("ReplicaSet %q is progressing.", rsName))
	}
}

// scaledDown reads an IntOrString: an integer, or a percentage of total
// rounded down (as maxUnavailable is).
func scaledDown(v any, total int64) int64 {
	if i, ok := toInt(v); ok {
		return i
	}

	var p int64

	s, _ := v.(string) //nolint:errcheck // 0 when neither
	if _, err := fmt.Sscanf(s, "%d%%", &p); err != nil {
		return 0
	}

	return p * total / 100
}

// reconcileReplicaSetsLocked keeps spec.replicas pods and reports status.
func (s *Server) reconcileReplicaSetsLocked() {
	rsRes := s.builtinLocked("replicasets")

	for _, old := range s.sortedLocked(rsRes.key()) {
		rs := copyObj(old)
		want, _ := intAt(rs, "spec", "replicas")
		pods := s.ownedLocked("/pods", str(rs, "metadata", "uid"))

		for int64(len(pods)) > want {
			s.deletePodLocked(pods[len(pods)-1])
			pods = pods[:len(pods)-1]
		}

		for i := int64(len(pods)); i < want; i++ {
			s.newPodLocked(rs, "apps/v1", "ReplicaSet", mapAt(rs, "spec", "template"), nil, "")
		}

		pods = s.ownedLocked("/pods", str(rs, "metadata", "uid"))

		var ready int64

		for _, p := range pods {
			if podReady(p) {
				ready++
			}
		}

		st := obj{"replicas": num(int64(len(pods))), "observedGeneration": nested(rs, "metadata", "generation")}
		if ready > 0 {
			st["readyReplicas"], st["availableReplicas"], st["fullyLabeledReplicas"] = num(ready), num(ready), num(int64(len(pods)))
		}

		rs["status"] = st
		s.saveLocked(rsRes, old, rs)
	}
}

// reconcileJobsLocked runs one pod per Job and completes the Job when its
// pod has run (every container exits 0 at once in the sandbox).
func (s *Server) reconcileJobsLocked() {
	jobRes := s.builtinLocked("jobs")

	for _, old := range s.sortedLocked(jobRes.key()) {
		job := copyObj(old)
		if condition(job, "Complete") != nil {
			continue
		}

		pods := s.ownedLocked("/pods", str(job, "metadata", "uid"))
		if len(pods) == 0 {
			s.newPodLocked(job, "batch/v1", "Job", mapAt(job, "spec", "template"), obj{"batch.kubernetes.io/job-name": str(job, "metadata", "name")}, "")
			set(job, s.timestamp(), "status", "startTime")
			set(job, num(1), "status", "active")
			s.saveLocked(jobRes, old, job)

			continue
		}

		if str(pods[0], "status", "phase") == "Succeeded" {
			st := mapAt(job, "status")
			delete(st, "active")
			st["succeeded"], st["completionTime"] = num(1), s.timestamp()
			s.setCondition(job, "SuccessCriteriaMet", "True", "CompletionsReached", "Reached expected number of succeeded pods")
			s.setCondition(job, "Complete", "True", "CompletionsReached", "Reached expected number of succeeded pods")
			s.saveLocked(jobRes, old, job)
		}
	}
}

// reconcilePodsLocked schedules pending pods and plays their kubelet.
func (s *Server) reconcilePodsLocked() {
	podRes := s.builtinLocked("pods")

	for _, old := range s.sortedLocked(podRes.key()) {
		p := copyObj(old)
		node := str(p, "spec", "nodeName")

		if node == "" {
			name, why := s.scheduleLocked(mapAt(p, "spec"), str(controllerOf(p), "uid"))
			if name == "" {
				s.setCondition(p, "PodScheduled", "False", "Unschedulable", why)
				s.saveLocked(podRes, old, p)

				continue
			}

			set(p, name, "spec", "nodeName")
			node = name
		}

		n, ok := s.getLocked(s.builtinLocked("nodes"), "", node)
		if !ok {
			// Pod garbage collection force-deletes pods bound to a node that is gone.
			s.deletePodLocked(old)

			continue
		}

		if s.kubelets[node] {
			s.kubeletSyncLocked(p, n)
		}

		s.saveLocked(podRes, old, p)
	}
}

// kubeletSyncLocked sets a pod's status as the node's kubelet would.
func (s *Server) kubeletSyncLocked(p, node obj) {
	phase := str(p, "status", "phase")
	if phase == "Succeeded" || phase == "Failed" {
		return
	}

	hostNet := boolAt(p, "spec", "hostNetwork")
	netReady := hostNet || str(condition(node, "Ready"), "status") == "True"
	gate := s.podGateLocked(p)

	st := mapAt(p, "status")
	st["hostIP"] = nodeInternalIP(node)
	s.setCondition(p, "PodScheduled", "True", "", "")

	if st["startTime"] == nil {
		st["startTime"] = s.timestamp()
	}

	switch {
	case !netReady:
		s.podWaiting(p, "ContainerCreating", "")
	case s.pullFailingLocked(p, node):
		// The kubelet pulls before it creates a container
		// (kuberuntime startContainer: EnsureImageExists first).
		s.setPullWaiting(p, node, hostNet, s.pullStatusLocked(p, str(node, "metadata", "name")))
	case gate.configErr != "":
		s.podWaiting(p, "CreateContainerConfigError", gate.configErr)
	case str(controllerOf(p), "kind") == "Job":
		st["phase"] = "Succeeded"
		s.setCondition(p, "Ready", "False", "PodCompleted", "")
		s.setContainers(p, "terminated", "Completed", "", false)
	case gate.crash != "":
		st["phase"] = "Running"
		s.setPodIP(p, node, hostNet)
		s.setCondition(p, "Initialized", "True", "", "")
		s.setCondition(p, "ContainersReady", "False", "ContainersNotReady", "containers with unready status")
		s.setCondition(p, "Ready", "False", "ContainersNotReady", "containers with unready status")
		s.setContainers(p, "waiting", "CrashLoopBackOff", gate.crash, false)
	default:
		st["phase"] = "Running"
		s.setPodIP(p, node, hostNet)
		s.setCondition(p, "Initialized", "True", "", "")
		s.setCondition(p, "ContainersReady", "True", "", "")
		s.setCondition(p, "Ready", "True", "", "")
		s.setContainers(p, "running", "", "", true)
	}
}

func (s *Server) podWaiting(p obj, reason, msg string) {
	set(p, "Pending", "status", "phase")
	s.setCondition(p, "Ready", "False", "ContainersNotReady", "containers with unready status")
	s.setContainers(p, "waiting", reason, msg, false)
}

func (s *Server) setContainers(p obj, state, reason, msg string, ready bool) {
	var out []any

	for _, c := range listAt(p, "spec", "containers") {
		st := obj{}

		switch state {
		case "running":
			st["startedAt"] = s.timestamp()

			if old := listAt(p, "status", "containerStatuses"); len(old) > 0 && nested(old[0], "state", "running", "startedAt") != nil {
				st["startedAt"] = nested(old[0], "state", "running", "startedAt")
			}
		case "terminated":
			st["exitCode"], st["reason"] = num(0), reason
		default:
			st["reason"] = reason
			if msg != "" {
				st["message"] = msg
			}
		}

		out = append(out, obj{
			"name": str(c, "name"), "image": str(c, "image"), "ready": ready, "started": state == "running",
			"restartCount": num(0), "state": obj{state: st},
		})
	}

	set(p, out, "status", "containerStatuses")
}

func (s *Server) setPodIP(p, node obj, hostNet bool) {
	if str(p, "status", "podIP") != "" {
		return
	}

	ip := nodeInternalIP(node)

	if !hostNet {
		if pfx, err := netip.ParsePrefix(str(node, "spec", "podCIDR")); err == nil {
			s.seq++
			ip = addOffset(pfx.Addr(), int(2+s.seq%250)).String()
		}
	}

	if ip != "" {
		set(p, ip, "status", "podIP")
		set(p, []any{obj{"ip": ip}}, "status", "podIPs")
	}
}

func nodeInternalIP(n obj) string {
	for _, a := range listAt(n, "status", "addresses") {
		if str(a, "type") == "InternalIP" {
			return str(a, "address")
		}
	}

	return ""
}

// reconcilePDBsLocked is the disruption controller's status.
func (s *Server) reconcilePDBsLocked() {
	pdbRes := s.builtinLocked("poddisruptionbudgets")

	for _, old := range s.sortedLocked(pdbRes.key()) {
		pdb := copyObj(old)
		b := s.budgetLocked(pdb)
		st := obj{
			"observedGeneration": nested(pdb, "metadata", "generation"), "expectedPods": num(b.expected),
			"currentHealthy": num(b.healthy), "desiredHealthy": num(b.desired), "disruptionsAllowed": num(b.allowed),
			"conditions": listAt(pdb, "status", "conditions"),
		}
		pdb["status"] = st

		if b.allowed > 0 {
			s.setCondition(pdb, "DisruptionAllowed", "True", "SufficientPods", "")
		} else {
			s.setCondition(pdb, "DisruptionAllowed", "False", "InsufficientPods", "")
		}

		s.saveLocked(pdbRes, old, pdb)
	}
}

// collectGarbageLocked deletes objects whose controller owner is gone
// (background cascading deletion).
func (s *Server) collectGarbageLocked() {
	uids := map[string]bool{}

	all := s.allResourcesLocked()
	for _, r := range all {
		for _, o := range s.sortedLocked(r.key()) {
			uids[str(o, "metadata", "uid")] = true
		}
	}

	for _, r := range all {
		for _, o := range s.sortedLocked(r.key()) {
			refs := listAt(o, "metadata", "ownerReferences")
			if len(refs) > 0 && !slices.ContainsFunc(refs, func(ref any) bool { return uids[str(ref, "uid")] }) {
				s.removeLocked(r, o)
			}
		}
	}
}
