package kubefake

import (
	"context"
	"strconv"
	"time"

	"github.com/hetznercloud/hcloud-go/v2/hcloud"
)

// loop is the simulated control plane: a pass after every change and every
// Resync, until Close.
func (s *Server) loop(ctx context.Context) {
	defer close(s.done)

	t := time.NewTicker(s.opts.Resync)
	defer t.Stop()

	for {
		s.pass(ctx)

		select {
		case <-ctx.Done():
			return
		case <-s.kick:
		case <-t.C:
		}
	}
}

// Sync runs one pass of the control loop now (tests; the loop runs by itself).
func (s *Server) Sync(ctx context.Context) { s.pass(ctx) }

func (s *Server) pass(ctx context.Context) {
	defer s.syncIngress()

	s.mu.Lock()
	s.reconcileLocked()
	work := s.cloudWorkLocked()
	s.mu.Unlock()

	if len(work) == 0 {
		return
	}

	results := s.runCloud(ctx, work)

	s.mu.Lock()
	for _, r := range results {
		s.applyCloudLocked(r)
	}

	s.reconcileLocked()
	s.mu.Unlock()
}

// reconcileLocked runs the in-cluster controllers until they settle (a few
// rounds: a node turning Ready lets more pods run, which ...).
func (s *Server) reconcileLocked() {
	if s.cloud.checks == nil {
		s.cloud = cloudState{
			checks: map[string]cloudCheck{}, routes: map[string]bool{}, retry: map[string]time.Time{}, lbTargets: map[string]string{},
			volumes: map[string]int64{},
		}
	}

	for range 4 {
		before := s.rv

		s.reconcileNodesLocked()
		s.reconcileDaemonSetsLocked()
		s.reconcileDeploymentsLocked()
		s.reconcileReplicaSetsLocked()
		s.reconcileJobsLocked()
		s.reconcilePodsLocked()
		s.reconcileCiliumOperatorLocked()
		s.reconcilePVCsLocked()
		s.reconcilePDBsLocked()
		s.collectGarbageLocked()

		if s.rv == before {
			return
		}
	}
}

// applyCloudLocked records what the CCM learnt and initialises nodes as the
// cloud node controller does (k8s.io/cloud-provider node_controller).
func (s *Server) applyCloudLocked(r ccmResult) {
	if r.check != nil {
		s.cloud.checks[checkKey(r.env)] = *r.check
	}

	s.applyCSILocked(r.volumes)

	nodes := s.builtinLocked("nodes")

	for _, name := range r.failed {
		s.cloud.retry[name] = s.now().Add(2 * time.Second)
	}

	for name, srv := range r.servers {
		old, ok := s.getLocked(nodes, "", name)
		if !ok {
			continue
		}

		n := copyObj(old)
		s.initNode(n, srv, r.env)
		s.saveLocked(nodes, old, n)
	}

	// The cloud node lifecycle controller looks again after its monitor period.
	for _, name := range r.checked {
		s.cloud.retry["dead/"+name] = s.now().Add(5 * time.Second)
	}

	for _, name := range r.gone {
		_, _ = s.deleteLocked(nodes, "", name, false) //nolint:errcheck // already gone is fine
	}

	for _, key := range r.routes {
		s.cloud.routes[key] = true
	}

	if len(r.routes) > 0 {
		for _, old := range s.sortedLocked(nodes.key()) {
			key := r.env.vars["HCLOUD_NETWORK"] + "/" + str(old, "spec", "podCIDR") + "/" + nodeInternalIP(old)
			if !s.cloud.routes[key] {
				continue
			}

			n := copyObj(old)
			s.setCondition(n, "NetworkUnavailable", "False", "RouteCreated", "RouteController created a route")
			s.saveLocked(nodes, old, n)
		}
	}

	for name := range r.servers {
		delete(s.cloud.retry, name)
	}

	s.applyLBLocked(r.lbs)
}

// initNode sets what the hcloud CCM's instances interface reports: the
// provider ID, the addresses (the private IP in HCLOUD_NETWORK as
// InternalIP, the public IPv4 as ExternalIP) and the instance type and
// topology labels, then lifts the uninitialized taint. The API of the
// pinned hcloud-go no longer carries a server's datacenter, so zone and
// region are both the location here.
func (s *Server) initNode(n obj, srv *hcloud.Server, env cloudEnv) {
	set(n, "hcloud://"+strconv.FormatInt(srv.ID, 10), "spec", "providerID")
	setTaint(n, taintUninitialized, "true", "NoSchedule", false)

	internal := nodeInternalIP(n)

	if nw := env.vars["HCLOUD_NETWORK"]; nw != "" {
		chk := s.cloud.checks[checkKey(env)]

		for _, pn := range srv.PrivateNet {
			if pn.Network != nil && (pn.Network.ID == chk.networkID || pn.Network.Name == nw || strconv.FormatInt(pn.Network.ID, 10) == nw) && pn.IP != nil {
				internal = pn.IP.String()
			}
		}
	}

	addrs := []any{}
	if internal != "" {
		addrs = append(addrs, obj{"type": "InternalIP", "address": internal})
	}

	if ip := srv.PublicNet.IPv4.IP; ip != nil && !srv.PublicNet.IPv4.IsUnspecified() {
		addrs = append(addrs, obj{"type": "ExternalIP", "address": ip.String()})
	}

	addrs = append(addrs, obj{"type": "Hostname", "address": srv.Name})
	set(n, addrs, "status", "addresses")

	labels := mapAt(n, "metadata", "labels")
	if srv.ServerType != nil {
		labels["node.kubernetes.io/instance-type"] = srv.ServerType.Name
		labels["beta.kubernetes.io/instance-type"] = srv.ServerType.Name
	}

	if srv.Location != nil {
		for _, k := range []string{"topology.kubernetes.io/region", "topology.kubernetes.io/zone", "failure-domain.beta.kubernetes.io/region", "failure-domain.beta.kubernetes.io/zone"} {
			labels[k] = srv.Location.Name
		}
	}

	labels["instance.hetzner.cloud/provided-by"] = "cloud"
}

// reconcilePVCsLocked binds claims of a StorageClass whose provisioner is
// csi.hetzner.cloud once the CSI controller provisioned their Hetzner
// volume (csi.go); other provisioners are not simulated and their claims
// stay Pending.
func (s *Server) reconcilePVCsLocked() {
	pvcRes, pvRes := s.builtinLocked("persistentvolumeclaims"), s.builtinLocked("persistentvolumes")

	for _, old := range s.sortedLocked(pvcRes.key()) {
		if str(old, "status", "phase") == "Bound" {
			continue
		}

		pvc := copyObj(old)
		set(pvc, "Pending", "status", "phase")

		scName := str(pvc, "spec", "storageClassName")
		if scName == "" {
			scName = s.defaultStorageClassLocked()
		}

		sc, ok := s.getLocked(s.builtinLocked("storageclasses"), "", scName)
		if ok && str(sc, "volumeBindingMode") == "WaitForFirstConsumer" {
			// The scheduler picks a node for the first pod using the claim
			// and records it; only then does the provisioner act
			// (kube-scheduler VolumeBinding plugin, annotation
			// volume.kubernetes.io/selected-node).
			node := s.consumerNodeLocked(str(pvc, "metadata", "namespace"), str(pvc, "metadata", "name"))
			if node == "" {
				s.saveLocked(pvcRes, old, pvc)
				continue
			}
			set(pvc, node, "metadata", "annotations", "volume.kubernetes.io/selected-node")
		}
		if volID := s.cloud.volumes[str(pvc, "metadata", "uid")]; ok && str(sc, "provisioner") == "csi.hetzner.cloud" && volID != 0 {
			pvName := "pvc-" + str(pvc, "metadata", "uid")
			pv := obj{
				"metadata": obj{"name": pvName, "annotations": obj{"pv.kubernetes.io/provisioned-by": "csi.hetzner.cloud"}},
				"spec": obj{
					"capacity":    deepCopy(mapAt(pvc, "spec", "resources", "requests")),
					"accessModes": deepCopy(listAt(pvc, "spec", "accessModes")), "storageClassName": scName,
					"persistentVolumeReclaimPolicy": "Delete",
					"csi":                           obj{"driver": "csi.hetzner.cloud", "volumeHandle": strconv.FormatInt(volID, 10), "fsType": "ext4"},
					"claimRef":                      obj{"kind": "PersistentVolumeClaim", "namespace": str(pvc, "metadata", "namespace"), "name": str(pvc, "metadata", "name"), "uid": str(pvc, "metadata", "uid")},
				},
			}

			if _, err := s.createLocked(pvRes, "", pv, createOpts{}); err == nil {
				set(pvc, pvName, "spec", "volumeName")
				set(pvc, "Bound", "status", "phase")
				set(pvc, deepCopy(mapAt(pvc, "spec", "resources", "requests")), "status", "capacity")
				set(pvc, deepCopy(listAt(pvc, "spec", "accessModes")), "status", "accessModes")
			}
		}

		s.saveLocked(pvcRes, old, pvc)
	}
}

// consumerNodeLocked is the node of a scheduled pod that mounts the claim
// namespace/name, or "".
func (s *Server) consumerNodeLocked(namespace, name string) string {
	for _, p := range s.sortedLocked(s.builtinLocked("pods").key()) {
		node := str(p, "spec", "nodeName")
		if node == "" || str(p, "metadata", "namespace") != namespace {
			continue
		}
		for _, v := range listAt(p, "spec", "volumes") {
			if vm, ok := v.(map[string]any); ok && str(vm, "persistentVolumeClaim", "claimName") == name {
				return node
			}
		}
	}
	return ""
}

func (s *Server) defaultStorageClassLocked() string {
	for _, sc := range s.sortedLocked("storage.k8s.io/storageclasses") {
		if str(sc, "metadata", "annotations", "storageclass.kubernetes.io/is-default-class") == "true" {
			return str(sc, "metadata", "name")
		}
	}

	return ""
}
