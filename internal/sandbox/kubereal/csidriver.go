package kubereal

import (
	"context"
	"fmt"
	"maps"
	"strconv"
	"strings"
	"time"

	"github.com/hetznercloud/hcloud-go/v2/hcloud"
	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/tools/record"
)

// The Hetzner CSI driver (hetznercloud/csi-driver, checked at commit
// 53ead0b2: internal/driver/controller.go CreateVolume, DeleteVolume and
// ControllerPublishVolume; internal/volsrv/volume.go; cmd/main.go;
// chart/templates/controller/deployment.yaml) with the sidecars the chart
// runs beside it: the external-provisioner (--feature-gates=Topology=true
// --default-fstype=ext4 --extra-create-metadata) and the
// external-attacher.
const (
	csiDriverName       = "csi.hetzner.cloud"
	csiTopologyLocation = csiDriverName + "/location"
	csiMinSizeGB        = 10
	csiPVFinalizer      = "external-provisioner.volume.kubernetes.io/finalizer"
	annStorageProvision = "volume.kubernetes.io/storage-provisioner"
	annBetaStorageProv  = "volume.beta.kubernetes.io/storage-provisioner"
	annSelectedNode     = "volume.kubernetes.io/selected-node"
	annProvisionedBy    = "pv.kubernetes.io/provisioned-by"
)

// csiDriver provisions, attaches and deletes Hetzner volumes while a
// Ready pod of the CSI controller (the driver's image with HCLOUD_TOKEN)
// runs; the node plugin (the image without a token) labels its node with
// the location, as the kubelet's plugin registration does. Binding is the
// real PV controller's, and the scheduler picks the node of a
// WaitForFirstConsumer claim.
type csiDriver struct {
	sim      *Simulators
	recorder record.EventRecorder
	// retry per claim, volume attachment or PV: when a failed attempt may
	// be repeated.
	retry map[string]retry
}

type retry struct {
	at       time.Time
	failures int
}

// The sidecars' retries: exponential from 1s to 5 minutes per object
// (external-provisioner and external-attacher --retry-interval-start and
// --retry-interval-max defaults).
const (
	csiMinRetry = time.Second
	csiMaxRetry = 5 * time.Minute
)

func (d *csiDriver) reconcile(ctx context.Context) {
	d.labelNodes(ctx)

	env, ok := d.sim.running(csiImage, func(e podEnv) bool { return e.vars["HCLOUD_TOKEN"] != "" })
	if !ok {
		return
	}

	c := d.sim.hcloud(env.vars["HCLOUD_TOKEN"], "csi-driver")

	d.provisionClaims(ctx, c, env)
	d.attachVolumes(ctx, c)
	d.deleteReleased(ctx, c)
}

// due reports whether key may be attempted now; failed sets its backoff.
func (d *csiDriver) due(key string) bool { return time.Now().After(d.retry[key].at) }

func (d *csiDriver) failed(key string) {
	n := d.retry[key].failures + 1
	d.retry[key] = retry{at: time.Now().Add(backoff(n, csiMinRetry, csiMaxRetry)), failures: n}
}

// succeeded forgets key's failures.
func (d *csiDriver) succeeded(key string) { delete(d.retry, key) }

// provisionClaims is the external-provisioner: a claim the PV controller
// handed to csi.hetzner.cloud (its storage-provisioner annotation) gets a
// volume and a PV pre-bound to it; a WaitForFirstConsumer claim waits
// for the scheduler's selected node.
func (d *csiDriver) provisionClaims(ctx context.Context, c *hcloud.Client, env podEnv) {
	pvcs, err := d.sim.pvcs.List(labels.Everything())
	if err != nil {
		return
	}

	for _, pvc := range pvcs {
		key := "pvc/" + string(pvc.UID)
		if pvc.Spec.VolumeName != "" || pvc.Status.Phase != corev1.ClaimPending || pvc.DeletionTimestamp != nil || !d.due(key) {
			continue
		}

		if p := pvc.Annotations[annStorageProvision]; p != csiDriverName && pvc.Annotations[annBetaStorageProv] != csiDriverName {
			continue
		}

		if _, err := d.sim.pvs.Get("pvc-" + string(pvc.UID)); err == nil {
			continue // provisioned; the PV controller binds it
		}

		sc, err := d.sim.classes.Get(ptrValue(pvc.Spec.StorageClassName))
		if err != nil || sc.Provisioner != csiDriverName {
			continue
		}

		if err := d.provision(ctx, c, env, pvc, sc); err != nil {
			d.recorder.Eventf(pvc, corev1.EventTypeWarning, "ProvisioningFailed", "failed to provision volume with StorageClass %q: %v", sc.Name, err)
			d.failed(key)

			continue
		}

		d.succeeded(key)
	}
}

func ptrValue(s *string) string {
	if s == nil {
		return ""
	}

	return *s
}

// location is where the claim's volume goes: the selected node's
// location (WaitForFirstConsumer), else the location of the node the
// controller runs on (its metadata service's answer).
func (d *csiDriver) location(pvc *corev1.PersistentVolumeClaim, sc *storagev1.StorageClass, env podEnv) (string, error) {
	node := env.node
	if sc.VolumeBindingMode != nil && *sc.VolumeBindingMode == storagev1.VolumeBindingWaitForFirstConsumer {
		if node = pvc.Annotations[annSelectedNode]; node == "" {
			return "", fmt.Errorf("claim %s/%s has no selected node yet", pvc.Namespace, pvc.Name)
		}
	}

	n, err := d.sim.nodes.Get(node)
	if err != nil {
		return "", fmt.Errorf("node %s: %w", node, err)
	}

	if loc := n.Labels[csiTopologyLocation]; loc != "" {
		return loc, nil
	}

	if loc := n.Labels["topology.kubernetes.io/region"]; loc != "" && node == env.node {
		return loc, nil
	}

	return "", fmt.Errorf("rpc error: code = InvalidArgument desc = can not determine the location to create the volume in: node %s has no %s topology", node, csiTopologyLocation)
}

// volumeLabels are CreateVolume's: managed-by, HCLOUD_VOLUME_EXTRA_LABELS,
// then the external-provisioner's extra metadata and the class's labels
// parameter.
func volumeLabels(env podEnv, pvc *corev1.PersistentVolumeClaim, sc *storagev1.StorageClass, pvName string) map[string]string {
	out := map[string]string{"managed-by": "csi-driver"}
	maps.Copy(out, parseLabels(env.vars["HCLOUD_VOLUME_EXTRA_LABELS"]))
	out["pvc-name"], out["pvc-namespace"], out["pv-name"] = pvc.Name, pvc.Namespace, pvName
	maps.Copy(out, parseLabels(sc.Parameters["labels"]))

	return out
}

// parseLabels is utils.ConvertLabelsToMap: "k=v,k2=v2", spaces trimmed.
func parseLabels(s string) map[string]string {
	out := map[string]string{}

	for kv := range strings.SplitSeq(s, ",") {
		k, v, _ := strings.Cut(kv, "=")
		if k = strings.TrimSpace(k); k != "" {
			out[k] = strings.TrimSpace(v)
		}
	}

	return out
}

// sizeGB is the claim's request in whole GB, at least 10.
func sizeGB(pvc *corev1.PersistentVolumeClaim) int {
	q := pvc.Spec.Resources.Requests[corev1.ResourceStorage]
	gb := (q.Value() + (1<<30 - 1)) >> 30

	return max(csiMinSizeGB, int(gb))
}

func (d *csiDriver) provision(ctx context.Context, c *hcloud.Client, env podEnv, pvc *corev1.PersistentVolumeClaim, sc *storagev1.StorageClass) error {
	loc, err := d.location(pvc, sc, env)
	if err != nil {
		return err
	}

	d.recorder.Eventf(pvc, corev1.EventTypeNormal, "Provisioning", "External provisioner is provisioning volume for claim %q", pvc.Namespace+"/"+pvc.Name)

	name := "pvc-" + string(pvc.UID)

	vol, _, err := c.Volume.GetByName(ctx, name)
	if err == nil && vol == nil {
		var res hcloud.VolumeCreateResult

		res, _, err = c.Volume.Create(ctx, hcloud.VolumeCreateOpts{Name: name, Size: sizeGB(pvc), Location: &hcloud.Location{Name: loc},
			Labels: volumeLabels(env, pvc, sc, name)})
		if err == nil {
			err = c.Action.WaitFor(ctx, res.Action)
		}

		vol = res.Volume
	}

	if err != nil {
		return fmt.Errorf("rpc error: code = Internal desc = failed to create volume: %w", err)
	}

	if _, err := d.sim.admin.CoreV1().PersistentVolumes().Create(ctx, csiPV(pvc, sc, vol, loc), metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("create PV %s: %w", name, err)
	}

	d.recorder.Eventf(pvc, corev1.EventTypeNormal, "ProvisioningSucceeded", "Successfully provisioned volume %s", name)

	return nil
}

// csiPV is the external-provisioner's PV: pre-bound to the claim, the
// volume's ID as handle, node affinity to its location.
func csiPV(pvc *corev1.PersistentVolumeClaim, sc *storagev1.StorageClass, vol *hcloud.Volume, loc string) *corev1.PersistentVolume {
	policy := corev1.PersistentVolumeReclaimDelete
	if sc.ReclaimPolicy != nil {
		policy = *sc.ReclaimPolicy
	}

	fsType := sc.Parameters["csi.storage.k8s.io/fstype"]
	if fsType == "" {
		fsType = "ext4"
	}

	return &corev1.PersistentVolume{
		ObjectMeta: metav1.ObjectMeta{Name: "pvc-" + string(pvc.UID), Annotations: map[string]string{annProvisionedBy: csiDriverName}, Finalizers: []string{csiPVFinalizer}},
		Spec: corev1.PersistentVolumeSpec{
			Capacity:                      corev1.ResourceList{corev1.ResourceStorage: resource.MustParse(strconv.Itoa(vol.Size) + "Gi")},
			AccessModes:                   pvc.Spec.AccessModes,
			ClaimRef:                      &corev1.ObjectReference{Kind: "PersistentVolumeClaim", APIVersion: "v1", Namespace: pvc.Namespace, Name: pvc.Name, UID: pvc.UID},
			PersistentVolumeReclaimPolicy: policy,
			StorageClassName:              sc.Name,
			MountOptions:                  sc.MountOptions,
			VolumeMode:                    pvc.Spec.VolumeMode,
			PersistentVolumeSource: corev1.PersistentVolumeSource{CSI: &corev1.CSIPersistentVolumeSource{
				Driver: csiDriverName, VolumeHandle: strconv.FormatInt(vol.ID, 10), FSType: fsType,
			}},
			NodeAffinity: &corev1.VolumeNodeAffinity{Required: &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{{
				MatchExpressions: []corev1.NodeSelectorRequirement{{Key: csiTopologyLocation, Operator: corev1.NodeSelectorOpIn, Values: []string{loc}}},
			}}}},
		},
	}
}

// deleteReleased is the external-provisioner's deletion: a Released PV of
// the driver with reclaim policy Delete loses its volume (DeleteVolume
// refuses one still attached: the attacher detaches it once the
// attach-detach controller drops its VolumeAttachment), then its
// finalizer and itself.
func (d *csiDriver) deleteReleased(ctx context.Context, c *hcloud.Client) {
	pvs, err := d.sim.pvs.List(labels.Everything())
	if err != nil {
		return
	}

	for _, pv := range pvs {
		key := "pv/" + pv.Name
		if pv.Spec.CSI == nil || pv.Spec.CSI.Driver != csiDriverName || pv.Status.Phase != corev1.VolumeReleased ||
			pv.Spec.PersistentVolumeReclaimPolicy != corev1.PersistentVolumeReclaimDelete || !d.due(key) {
			continue
		}

		if err := d.deleteVolume(ctx, c, pv); err != nil {
			d.recorder.Eventf(pv, corev1.EventTypeWarning, "VolumeFailedDelete", "%v", err)
			d.failed(key)

			continue
		}

		d.succeeded(key)
	}
}

func (d *csiDriver) deleteVolume(ctx context.Context, c *hcloud.Client, pv *corev1.PersistentVolume) error {
	id, err := strconv.ParseInt(pv.Spec.CSI.VolumeHandle, 10, 64)
	if err != nil {
		return fmt.Errorf("rpc error: code = InvalidArgument desc = invalid volume id %q", pv.Spec.CSI.VolumeHandle)
	}

	vol, _, err := c.Volume.GetByID(ctx, id)

	switch {
	case err != nil:
		return fmt.Errorf("rpc error: code = Internal desc = %w", err)
	case vol != nil && vol.Server != nil:
		return fmt.Errorf("rpc error: code = FailedPrecondition desc = volume is attached")
	case vol != nil:
		if _, err := c.Volume.Delete(ctx, vol); err != nil && !hcloud.IsError(err, hcloud.ErrorCodeNotFound) {
			return fmt.Errorf("rpc error: code = Internal desc = %w", err)
		}
	}

	pv = pv.DeepCopy()
	pv.Finalizers = removeString(pv.Finalizers, csiPVFinalizer)

	if _, err := d.sim.admin.CoreV1().PersistentVolumes().Update(ctx, pv, metav1.UpdateOptions{}); err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("remove finalizer of PV %s: %w", pv.Name, err)
	}

	if err := d.sim.admin.CoreV1().PersistentVolumes().Delete(ctx, pv.Name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("delete PV %s: %w", pv.Name, err)
	}

	return nil
}

func removeString(in []string, s string) []string {
	var out []string

	for _, v := range in {
		if v != s {
			out = append(out, v)
		}
	}

	return out
}
