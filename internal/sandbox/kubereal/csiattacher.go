package kubereal

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/hetznercloud/hcloud-go/v2/hcloud"
	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
)

// csiAttacherFinalizer is the external-attacher's finalizer on the
// VolumeAttachments it handles ("external-attacher/" and the driver name
// with dots as dashes).
const csiAttacherFinalizer = "external-attacher/csi-hetzner-cloud"

// labelNodes is the kubelet's CSI plugin registration for the nodes where
// the node plugin runs (a Ready pod of the driver's image without
// HCLOUD_TOKEN): NodeGetInfo answers the server's location (from the
// metadata service; here the cloud controller's region label, the same
// location name), which the kubelet sets as the csi.hetzner.cloud/location
// label the PVs' node affinity names.
func (d *csiDriver) labelNodes(ctx context.Context) {
	pods, err := d.sim.pods.List(labels.Everything())
	if err != nil {
		return
	}

	for _, p := range pods {
		if p.Spec.NodeName == "" || p.DeletionTimestamp != nil || !podReady(p) ||
			!slices.ContainsFunc(p.Spec.Containers, func(c corev1.Container) bool {
				return imageIs(c.Image, csiImage) && !slices.ContainsFunc(c.Env, func(e corev1.EnvVar) bool { return e.Name == "HCLOUD_TOKEN" })
			}) {
			continue
		}

		n, err := d.sim.nodes.Get(p.Spec.NodeName)
		if err != nil {
			continue
		}

		loc := n.Labels["topology.kubernetes.io/region"]
		if loc == "" || n.Labels[csiTopologyLocation] == loc {
			continue
		}

		patch, _ := json.Marshal(map[string]any{"metadata": map[string]any{"labels": map[string]string{csiTopologyLocation: loc}}}) //nolint:errchkjson // plain map
		_, _ = d.sim.admin.CoreV1().Nodes().Patch(ctx, n.Name, types.StrategicMergePatchType, patch, metav1.PatchOptions{})         //nolint:errcheck // retried next pass
	}
}

// attachVolumes is the external-attacher: the attach-detach controller's
// VolumeAttachments for csi.hetzner.cloud are attached to the node's
// server (ControllerPublishVolume) and marked attached; deleted ones are
// detached (ControllerUnpublishVolume) and released.
func (d *csiDriver) attachVolumes(ctx context.Context, c *hcloud.Client) {
	vas, err := d.sim.attaches.List(labels.Everything())
	if err != nil {
		return
	}

	for _, va := range vas {
		key := "va/" + va.Name
		if va.Spec.Attacher != csiDriverName || !d.due(key) {
			continue
		}

		var err error

		switch {
		case va.DeletionTimestamp != nil && slices.Contains(va.Finalizers, csiAttacherFinalizer):
			err = d.detach(ctx, c, va)
		case va.DeletionTimestamp == nil && !va.Status.Attached:
			err = d.attach(ctx, c, va)
		}

		if err != nil {
			d.failed(key)

			continue
		}

		d.succeeded(key)
	}
}

// attachment is the Hetzner volume and server of a VolumeAttachment.
func (d *csiDriver) attachment(ctx context.Context, c *hcloud.Client, va *storagev1.VolumeAttachment) (*hcloud.Volume, int64, error) {
	if va.Spec.Source.PersistentVolumeName == nil {
		return nil, 0, fmt.Errorf("volume attachment %s has no PV", va.Name)
	}

	pv, err := d.sim.pvs.Get(*va.Spec.Source.PersistentVolumeName)
	if err != nil || pv.Spec.CSI == nil {
		return nil, 0, fmt.Errorf("PV of volume attachment %s: %w", va.Name, err)
	}

	volID, err := strconv.ParseInt(pv.Spec.CSI.VolumeHandle, 10, 64)
	if err != nil {
		return nil, 0, fmt.Errorf("rpc error: code = InvalidArgument desc = invalid volume id %q", pv.Spec.CSI.VolumeHandle)
	}

	n, err := d.sim.nodes.Get(va.Spec.NodeName)
	if err != nil {
		return nil, 0, fmt.Errorf("node of volume attachment %s: %w", va.Name, err)
	}

	srvID, err := strconv.ParseInt(strings.TrimPrefix(n.Spec.ProviderID, "hcloud://"), 10, 64)
	if err != nil {
		return nil, 0, fmt.Errorf("rpc error: code = InvalidArgument desc = missing node id of %s", n.Name)
	}

	vol, _, err := c.Volume.GetByID(ctx, volID)
	if err == nil && vol == nil {
		err = fmt.Errorf("rpc error: code = NotFound desc = volume %d not found", volID)
	}

	return vol, srvID, err
}

func (d *csiDriver) attach(ctx context.Context, c *hcloud.Client, va *storagev1.VolumeAttachment) error {
	va = va.DeepCopy()
	if !slices.Contains(va.Finalizers, csiAttacherFinalizer) {
		va.Finalizers = append(va.Finalizers, csiAttacherFinalizer)

		var err error
		if va, err = d.sim.admin.StorageV1().VolumeAttachments().Update(ctx, va, metav1.UpdateOptions{}); err != nil {
			return fmt.Errorf("finalizer on %s: %w", va.Name, err)
		}
	}

	vol, srvID, err := d.attachment(ctx, c, va)
	if err == nil {
		err = attachVolume(ctx, c, vol, srvID)
	}

	if err != nil {
		va.Status.AttachError = &storagev1.VolumeError{Time: metav1.Now(), Message: err.Error()}
	} else {
		va.Status = storagev1.VolumeAttachmentStatus{Attached: true}
	}

	if _, uerr := d.sim.admin.StorageV1().VolumeAttachments().UpdateStatus(ctx, va, metav1.UpdateOptions{}); uerr != nil && err == nil {
		err = uerr
	}

	return err
}

// attachVolume is ControllerPublishVolume: attached to the server already
// is fine; attached elsewhere is refused.
func attachVolume(ctx context.Context, c *hcloud.Client, vol *hcloud.Volume, srvID int64) error {
	if vol.Server != nil {
		if vol.Server.ID == srvID {
			return nil
		}

		return fmt.Errorf("rpc error: code = FailedPrecondition desc = volume %d is attached to server %d", vol.ID, vol.Server.ID)
	}

	a, _, err := c.Volume.Attach(ctx, vol, &hcloud.Server{ID: srvID})
	if err := waitAction(ctx, c, a, err); err != nil {
		return fmt.Errorf("rpc error: code = Internal desc = failed to attach volume %d to server %d: %w", vol.ID, srvID, err)
	}

	return nil
}

func (d *csiDriver) detach(ctx context.Context, c *hcloud.Client, va *storagev1.VolumeAttachment) error {
	vol, _, err := d.attachment(ctx, c, va)
	if err == nil && vol.Server != nil {
		a, _, derr := c.Volume.Detach(ctx, vol)
		err = waitAction(ctx, c, a, derr)
	}

	if err != nil && !strings.Contains(err.Error(), "NotFound") {
		return err
	}

	va = va.DeepCopy()
	va.Finalizers = removeString(va.Finalizers, csiAttacherFinalizer)

	if _, err := d.sim.admin.StorageV1().VolumeAttachments().Update(ctx, va, metav1.UpdateOptions{}); err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("release %s: %w", va.Name, err)
	}

	return nil
}
