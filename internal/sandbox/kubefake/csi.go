package kubefake

import (
	"context"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/hetznercloud/hcloud-go/v2/hcloud"
)

// The simulated CSI controller provisions a claim as the Hetzner CSI driver
// does: a Hetzner volume named after the PV ("pvc-<claim UID>") in the
// location of the node the claim is for, labelled managed-by=csi-driver,
// pvc-name, pvc-namespace and pv-name plus HCLOUD_VOLUME_EXTRA_LABELS
// (hetznercloud/csi-driver internal/driver/controller.go CreateVolume,
// cmd/controller/main.go), sized in whole GiB with a 10 GB minimum, then
// attached to that node's server (ControllerPublishVolume). Only then is
// the claim bound, with the volume's ID as the volume handle.

const csiMinSizeGB = 10

// csiWork is one claim to provision.
type csiWork struct {
	uid, namespace, name string
	sizeGB               int
	serverID             int64
	labels               map[string]string
}

// csiResult is a provisioned volume (id) or why not yet (err); with
// released set, a released PV's volume was deleted (pv names it).
type csiResult struct {
	uid string
	id  int64
	err string
	pv  string
}

// csiRelease is a PV whose claim is gone, with reclaim policy Delete: the
// driver deletes its volume (DeleteVolume), then the PV goes.
type csiRelease struct {
	pv string
	id int64
}

// csiReleasesLocked lists the driver's PVs whose claim no longer exists.
func (s *Server) csiReleasesLocked() []csiRelease {
	var out []csiRelease

	for _, pv := range s.sortedLocked(s.builtinLocked("persistentvolumes").key()) {
		if str(pv, "spec", "csi", "driver") != "csi.hetzner.cloud" || str(pv, "spec", "persistentVolumeReclaimPolicy") != "Delete" {
			continue
		}

		if _, ok := s.getLocked(s.builtinLocked("persistentvolumeclaims"), str(pv, "spec", "claimRef", "namespace"), str(pv, "spec", "claimRef", "name")); ok {
			continue
		}

		if id, err := strconv.ParseInt(str(pv, "spec", "csi", "volumeHandle"), 10, 64); err == nil && s.now().After(s.cloud.retry["pv/"+str(pv, "metadata", "name")]) {
			out = append(out, csiRelease{pv: str(pv, "metadata", "name"), id: id})
		}
	}

	return out
}

// release detaches and deletes a released PV's volume; one already gone
// is fine.
func release(ctx context.Context, c *hcloud.Client, r csiRelease) csiResult {
	res := csiResult{pv: r.pv}

	vol, _, err := c.Volume.GetByID(ctx, r.id)
	if err == nil && vol != nil && vol.Server != nil {
		if _, _, err = c.Volume.Detach(ctx, vol); err == nil {
			res.err = "detaching" // deleted on a later pass, once detached
			return res
		}
	}

	if err == nil && vol != nil {
		_, err = c.Volume.Delete(ctx, vol)
	}

	if err != nil {
		res.err = err.Error()
	}

	return res
}

// pvcTargetLocked is the node a pending claim of a csi.hetzner.cloud
// class is provisioned for: the first consumer's with WaitForFirstConsumer,
// else the first initialised node; "" when there is none yet.
func (s *Server) pvcTargetLocked(pvc, sc obj) string {
	if str(sc, "volumeBindingMode") == "WaitForFirstConsumer" {
		return str(pvc, "metadata", "annotations", "volume.kubernetes.io/selected-node")
	}

	for _, n := range s.sortedLocked("/nodes") {
		if strings.HasPrefix(str(n, "spec", "providerID"), "hcloud://") {
			return str(n, "metadata", "name")
		}
	}

	return ""
}

// csiWorkLocked lists the claims the CSI controller (configured by env)
// has to provision.
func (s *Server) csiWorkLocked(env cloudEnv) []csiWork {
	var out []csiWork

	for _, pvc := range s.sortedLocked(s.builtinLocked("persistentvolumeclaims").key()) {
		uid := str(pvc, "metadata", "uid")
		if str(pvc, "status", "phase") == "Bound" || s.cloud.volumes[uid] != 0 || s.now().Before(s.cloud.retry["pvc/"+uid]) {
			continue
		}

		sc, ok := s.getLocked(s.builtinLocked("storageclasses"), "", cmpOr(str(pvc, "spec", "storageClassName"), s.defaultStorageClassLocked()))
		if !ok || str(sc, "provisioner") != "csi.hetzner.cloud" {
			continue
		}

		node, ok := s.getLocked(s.builtinLocked("nodes"), "", s.pvcTargetLocked(pvc, sc))
		if !ok {
			continue
		}

		id, err := strconv.ParseInt(strings.TrimPrefix(str(node, "spec", "providerID"), "hcloud://"), 10, 64)
		if err != nil {
			continue // not initialised by the cloud controller yet
		}

		labels := map[string]string{"managed-by": "csi-driver", "pvc-name": str(pvc, "metadata", "name"),
			"pvc-namespace": str(pvc, "metadata", "namespace"), "pv-name": "pvc-" + uid}
		for _, kv := range strings.Split(env.vars["HCLOUD_VOLUME_EXTRA_LABELS"], ",") {
			if k, v, ok := strings.Cut(kv, "="); ok && k != "" {
				labels[k] = v
			}
		}

		out = append(out, csiWork{uid: uid, namespace: str(pvc, "metadata", "namespace"), name: str(pvc, "metadata", "name"),
			sizeGB: sizeGB(str(pvc, "spec", "resources", "requests", "storage")), serverID: id, labels: labels})
	}

	return out
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}

	return b
}

// sizeGB converts a storage quantity ("10Gi", "500M", "1Ti") to whole GiB,
// at least the Hetzner minimum of 10 GB.
func sizeGB(q string) int {
	mult := map[string]float64{"Ki": 1 << 10, "Mi": 1 << 20, "Gi": 1 << 30, "Ti": 1 << 40, "k": 1e3, "M": 1e6, "G": 1e9, "T": 1e12}
	num, unit := q, ""

	for suffix := range mult {
		if strings.HasSuffix(q, suffix) && len(suffix) > len(unit) {
			num, unit = strings.TrimSuffix(q, suffix), suffix
		}
	}

	f, err := strconv.ParseFloat(num, 64)
	if err != nil || f <= 0 {
		return csiMinSizeGB
	}

	if unit != "" {
		f *= mult[unit]
	}

	return max(csiMinSizeGB, int(math.Ceil(f/(1<<30))))
}

// provision creates (or finds, after a lost answer) the claim's volume and
// attaches it to the server; a failure is retried on a later pass.
func provision(ctx context.Context, c *hcloud.Client, w csiWork) csiResult {
	res := csiResult{uid: w.uid}
	name := "pvc-" + w.uid

	srv, _, err := c.Server.GetByID(ctx, w.serverID)
	if err != nil || srv == nil {
		res.err = fmt.Sprintf("server %d of the claim's node: %v", w.serverID, err)
		return res
	}

	vol, _, err := c.Volume.GetByName(ctx, name)
	if err == nil && vol == nil {
		var r hcloud.VolumeCreateResult

		// By the location's name, as the driver does
		// (hetznercloud/csi-driver internal/api/volume.go, Create): the API
		// description types create_volume_request.location as a string.
		r, _, err = c.Volume.Create(ctx, hcloud.VolumeCreateOpts{Name: name, Size: w.sizeGB,
			Location: &hcloud.Location{Name: srv.Location.Name}, Labels: w.labels})
		vol = r.Volume
	}

	if err != nil || vol == nil {
		res.err = fmt.Sprintf("create volume %s: %v", name, err)
		return res
	}

	if vol.Server == nil {
		// The create action still holds the volume (423 locked) until it
		// is done: the next pass attaches it.
		if _, _, err := c.Volume.Attach(ctx, vol, srv); err != nil {
			res.err = fmt.Sprintf("attach volume %s to %s: %v", name, srv.Name, err)
			return res
		}
	} else if vol.Server.ID != srv.ID {
		res.err = fmt.Sprintf("volume %s is attached to server %d, not %s", name, vol.Server.ID, srv.Name)
		return res
	}

	res.id = vol.ID

	return res
}

// applyCSILocked records provisioned volumes and removes the PVs whose
// volume was deleted; failures wait a moment.
func (s *Server) applyCSILocked(rs []csiResult) {
	for _, r := range rs {
		switch {
		case r.pv != "" && r.err != "":
			s.cloud.retry["pv/"+r.pv] = s.now().Add(time.Second)
		case r.pv != "":
			_, _ = s.deleteLocked(s.builtinLocked("persistentvolumes"), "", r.pv, false) //nolint:errcheck // gone already is fine
		case r.err != "":
			s.cloud.retry["pvc/"+r.uid] = s.now().Add(time.Second)
		default:
			s.cloud.volumes[r.uid] = r.id
		}
	}
}
