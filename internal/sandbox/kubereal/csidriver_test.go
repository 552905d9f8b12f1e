//go:build unix

package kubereal_test

import (
	"context"
	"fmt"
	"strconv"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The Hetzner CSI driver against the real API server: without its
// controller a WaitForFirstConsumer claim stays Pending although the
// scheduler picked a node; with it the volume is created in the node's
// location with the extra labels, the real PV controller binds it, the
// attach-detach controller's VolumeAttachment attaches it to the node's
// server, and deleting the claim deletes the volume.
func TestCSIDriverProvisionsAttachesAndDeletes(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()

	e := startCloud(t, ctx, map[string]map[string]string{"w-1": nil})
	e.ccm(t, ctx, nil)
	e.initialized(t, ctx)

	wffc, del := storagev1.VolumeBindingWaitForFirstConsumer, corev1.PersistentVolumeReclaimDelete
	sc := &storagev1.StorageClass{ObjectMeta: metav1.ObjectMeta{Name: "hcloud-volumes"}, Provisioner: "csi.hetzner.cloud",
		VolumeBindingMode: &wffc, ReclaimPolicy: &del}

	if _, err := e.admin.StorageV1().StorageClasses().Create(ctx, sc, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	class := sc.Name
	pvc := &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Name: "data", Namespace: "default"}, Spec: corev1.PersistentVolumeClaimSpec{
		StorageClassName: &class, AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
		Resources: corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")}},
	}}

	pvc, err := e.admin.CoreV1().PersistentVolumeClaims("default").Create(ctx, pvc, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}

	waitServiceAccount(t, ctx, e.admin, "default")

	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "db", Namespace: "default"}, Spec: corev1.PodSpec{
		Tolerations: []corev1.Toleration{{Operator: corev1.TolerationOpExists}},
		Containers:  []corev1.Container{{Name: "db", Image: "postgres:17", VolumeMounts: []corev1.VolumeMount{{Name: "data", MountPath: "/data"}}}},
		Volumes: []corev1.Volume{{Name: "data", VolumeSource: corev1.VolumeSource{
			PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: "data"}}}},
	}}

	if _, err := e.admin.CoreV1().Pods("default").Create(ctx, pod, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	// Without the driver: the scheduler selects w-1, the PV controller
	// hands the claim to csi.hetzner.cloud, and nothing provisions it.
	waitFor(t, 2*time.Minute, "the scheduler selects w-1 for the claim", func() (bool, error) {
		got, err := e.admin.CoreV1().PersistentVolumeClaims("default").Get(ctx, "data", metav1.GetOptions{})

		return err == nil && got.Annotations["volume.kubernetes.io/selected-node"] == "w-1" &&
			got.Annotations["volume.kubernetes.io/storage-provisioner"] == "csi.hetzner.cloud", err
	})

	time.Sleep(3 * time.Second)

	if got, _ := e.admin.CoreV1().PersistentVolumeClaims("default").Get(ctx, "data", metav1.GetOptions{}); got.Status.Phase != corev1.ClaimPending {
		t.Fatalf("claim %s without the CSI driver, want Pending", got.Status.Phase)
	}

	if p, _ := e.admin.CoreV1().Pods("default").Get(ctx, "db", metav1.GetOptions{}); p.Spec.NodeName != "" {
		t.Fatalf("pod bound to %s before its claim is, want it waiting", p.Spec.NodeName)
	}

	e.deploy(t, ctx, "hcloud-csi-node", "docker.io/hetznercloud/hcloud-csi-driver:v2.18.0", nil)
	e.deploy(t, ctx, "hcloud-csi-controller", "docker.io/hetznercloud/hcloud-csi-driver:v2.18.0", []corev1.EnvVar{
		{Name: "HCLOUD_TOKEN", Value: hcloudToken}, {Name: "HCLOUD_VOLUME_EXTRA_LABELS", Value: "cluster=demo, env = test"},
	})

	waitFor(t, 2*time.Minute, "the claim is Bound and the pod runs on w-1", func() (bool, error) {
		got, err := e.admin.CoreV1().PersistentVolumeClaims("default").Get(ctx, "data", metav1.GetOptions{})
		if err != nil || got.Status.Phase != corev1.ClaimBound {
			return false, err
		}

		p, err := e.admin.CoreV1().Pods("default").Get(ctx, "db", metav1.GetOptions{})

		return err == nil && p.Spec.NodeName == "w-1" && p.Status.Phase == corev1.PodRunning, err
	})

	pv, err := e.admin.CoreV1().PersistentVolumes().Get(ctx, "pvc-"+string(pvc.UID), metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}

	id, _ := strconv.ParseInt(pv.Spec.CSI.VolumeHandle, 10, 64)

	waitFor(t, time.Minute, "the volume is attached to w-1's server", func() (bool, error) {
		vol, _, err := e.hc.Volume.GetByID(ctx, id)
		if err != nil || vol == nil {
			return false, fmt.Errorf("volume %d: %v %v", id, vol, err)
		}

		if vol.Name != pv.Name || vol.Size != 10 || vol.Location.Name != "fsn1" || vol.Labels["managed-by"] != "csi-driver" ||
			vol.Labels["cluster"] != "demo" || vol.Labels["env"] != "test" || vol.Labels["pvc-name"] != "data" || vol.Labels["pvc-namespace"] != "default" {
			return false, fmt.Errorf("volume %s %d GB in %s, labels %v", vol.Name, vol.Size, vol.Location.Name, vol.Labels)
		}

		return vol.Server != nil && vol.Server.ID == e.servers["w-1"].ID, nil
	})

	// The kubelet ran the pod only once the attach-detach controller
	// reported the volume attached.
	if n, err := e.admin.CoreV1().Nodes().Get(ctx, "w-1", metav1.GetOptions{}); err != nil || len(n.Status.VolumesAttached) != 1 ||
		string(n.Status.VolumesAttached[0].Name) != "kubernetes.io/csi/csi.hetzner.cloud^"+pv.Spec.CSI.VolumeHandle {
		t.Errorf("w-1 volumesAttached %+v (%v), want the claim's volume", n.Status.VolumesAttached, err)
	}

	// Deleting the claim: detach once the pod is gone, then delete.
	if err := e.admin.CoreV1().Pods("default").Delete(ctx, "db", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}

	if err := e.admin.CoreV1().PersistentVolumeClaims("default").Delete(ctx, "data", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}

	waitFor(t, 3*time.Minute, "the released PV's volume is detached and deleted, then the PV goes", func() (bool, error) {
		vol, _, err := e.hc.Volume.GetByID(ctx, id)
		if err != nil || vol != nil {
			return false, err
		}

		_, err = e.admin.CoreV1().PersistentVolumes().Get(ctx, pv.Name, metav1.GetOptions{})

		return apierrors.IsNotFound(err), err
	})
}
