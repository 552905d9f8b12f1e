package kubefake_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/hetznercloud/hcloud-go/v2/hcloud"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/ohmytalos/ohmytalos/internal/sandbox/kubefake"
)

func csiController() *appsv1.Deployment {
	d := ccmDeployment()
	d.Name = "hcloud-csi-controller"
	d.Spec.Selector.MatchLabels = map[string]string{"app": "hcloud-csi-controller"}
	d.Spec.Template.Labels = d.Spec.Selector.MatchLabels
	d.Spec.Template.Spec.HostNetwork = false
	d.Spec.Template.Spec.Tolerations = nil
	d.Spec.Template.Spec.Containers[0].Name = "hcloud-csi-driver"
	d.Spec.Template.Spec.Containers[0].Image = "docker.io/hetznercloud/hcloud-csi-driver:v2.18.0"
	d.Spec.Template.Spec.Containers[0].Args = nil

	return d
}

func csiNode() *appsv1.DaemonSet {
	ds := cniDaemonSet()
	ds.Name = "hcloud-csi-node"
	ds.Spec.Selector.MatchLabels = map[string]string{"app": "hcloud-csi-node"}
	ds.Spec.Template.Labels = ds.Spec.Selector.MatchLabels
	ds.Spec.Template.Spec.Volumes = nil
	ds.Spec.Template.Spec.Containers = []corev1.Container{{Name: "hcloud-csi-driver", Image: "hetznercloud/hcloud-csi-driver:v2.18.0"}}

	return ds
}

func TestCSIBindsClaimsAndLifecycleDeletesNodes(t *testing.T) {
	ctx := testCtx(t)
	endpoint, servers := hetzner(t, ctx, "w-1")
	e := newEnv(t, kubefake.Options{HCloudEndpoint: endpoint})

	if err := e.srv.RegisterNode(kubefake.NodeRegistration{Name: "w-1", KubeletVersion: "v1.35.0", ExternalCloudProvider: true}); err != nil {
		t.Fatal(err)
	}

	if _, err := e.cs.CoreV1().Secrets("kube-system").Create(ctx, &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "hcloud"}, StringData: map[string]string{"token": "good", "network": "k8s"},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	for _, ds := range []*appsv1.DaemonSet{cniDaemonSet(), csiNode()} {
		if _, err := e.cs.AppsV1().DaemonSets("kube-system").Create(ctx, ds, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}

	if _, err := e.cs.StorageV1().StorageClasses().Create(ctx, &storagev1.StorageClass{
		ObjectMeta:  metav1.ObjectMeta{Name: "hcloud-volumes", Annotations: map[string]string{"storageclass.kubernetes.io/is-default-class": "true"}},
		Provisioner: "csi.hetzner.cloud",
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	pvc := &corev1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Name: "data"},
		Spec: corev1.PersistentVolumeClaimSpec{
			AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			Resources:   corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("10Gi")}},
		},
	}
	if _, err := e.cs.CoreV1().PersistentVolumeClaims("default").Create(ctx, pvc, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	// The CSI node plugin (no token) runs; the claim waits for the controller.
	eventually(t, ctx, "CSI node plugin ready, claim Pending", func() (bool, string) {
		ds, err := e.cs.AppsV1().DaemonSets("kube-system").Get(ctx, "hcloud-csi-node", metav1.GetOptions{})
		c, err2 := e.cs.CoreV1().PersistentVolumeClaims("default").Get(ctx, "data", metav1.GetOptions{})

		return err == nil && err2 == nil && ds.Status.NumberReady == 1 && c.Status.Phase == corev1.ClaimPending, fmt.Sprint(ds, c, err, err2)
	})

	for _, d := range []*appsv1.Deployment{ccmDeployment(), csiController()} {
		if _, err := e.cs.AppsV1().Deployments("kube-system").Create(ctx, d, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}

	eventually(t, ctx, "claim Bound once the CSI controller is available", func() (bool, string) {
		c, err := e.cs.CoreV1().PersistentVolumeClaims("default").Get(ctx, "data", metav1.GetOptions{})

		return err == nil && c.Status.Phase == corev1.ClaimBound && c.Spec.VolumeName != "", fmt.Sprint(c.Status, err)
	})

	// The claim is a Hetzner volume, as hcloud-go sees it: named after the
	// PV, labelled by the driver, attached to the node's server, and the
	// PV's handle is its ID.
	bound, err := e.cs.CoreV1().PersistentVolumeClaims("default").Get(ctx, "data", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	hc := hcloud.NewClient(hcloud.WithEndpoint(endpoint), hcloud.WithToken("good"))
	vol, _, err := hc.Volume.GetByName(ctx, bound.Spec.VolumeName)
	if err != nil || vol == nil {
		t.Fatalf("no Hetzner volume %s: %v", bound.Spec.VolumeName, err)
	}
	if vol.Labels["managed-by"] != "csi-driver" || vol.Labels["pvc-name"] != "data" || vol.Size != 10 ||
		vol.Server == nil || vol.Server.ID != servers["w-1"].ID {
		t.Errorf("volume %+v (labels %v), want 10 GB, managed-by csi-driver, attached to w-1", vol, vol.Labels)
	}
	if pv, err := e.cs.CoreV1().PersistentVolumes().Get(ctx, bound.Spec.VolumeName, metav1.GetOptions{}); err != nil ||
		pv.Spec.CSI == nil || pv.Spec.CSI.VolumeHandle != fmt.Sprint(vol.ID) {
		t.Errorf("PV %v: %v", pv, err)
	}

	// Deleting the claim releases its PV (reclaim policy Delete): the driver
	// detaches and deletes the volume, then the PV goes.
	if err := e.cs.CoreV1().PersistentVolumeClaims("default").Delete(ctx, "data", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, ctx, "the released volume deleted", func() (bool, string) {
		v, _, err := hc.Volume.GetByID(ctx, vol.ID)
		_, perr := e.cs.CoreV1().PersistentVolumes().Get(ctx, bound.Spec.VolumeName, metav1.GetOptions{})
		return err == nil && v == nil && apierrors.IsNotFound(perr), fmt.Sprint(v, err, perr)
	})

	// A WaitForFirstConsumer class binds only once a pod using the claim
	// is scheduled, on that pod's node.
	wffc := storagev1.VolumeBindingWaitForFirstConsumer
	if _, err := e.cs.StorageV1().StorageClasses().Create(ctx, &storagev1.StorageClass{
		ObjectMeta: metav1.ObjectMeta{Name: "late"}, Provisioner: "csi.hetzner.cloud", VolumeBindingMode: &wffc,
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	late := pvc.DeepCopy()
	late.Name, late.Spec.StorageClassName = "late", new("late")
	if _, err := e.cs.CoreV1().PersistentVolumeClaims("default").Create(ctx, late, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	time.Sleep(300 * time.Millisecond)
	if c, err := e.cs.CoreV1().PersistentVolumeClaims("default").Get(ctx, "late", metav1.GetOptions{}); err != nil || c.Status.Phase != corev1.ClaimPending {
		t.Fatalf("a WaitForFirstConsumer claim without a pod: %v %v", c.Status, err)
	}
	if _, err := e.cs.CoreV1().Pods("default").Create(ctx, &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "app"},
		Spec: corev1.PodSpec{
			Containers: []corev1.Container{{Name: "app", Image: "registry.example/app:1"}},
			Volumes: []corev1.Volume{{Name: "data", VolumeSource: corev1.VolumeSource{
				PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: "late"}}}},
		},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, ctx, "the WaitForFirstConsumer claim bound on the pod's node", func() (bool, string) {
		c, err := e.cs.CoreV1().PersistentVolumeClaims("default").Get(ctx, "late", metav1.GetOptions{})
		p, perr := e.cs.CoreV1().Pods("default").Get(ctx, "app", metav1.GetOptions{})
		return err == nil && c.Status.Phase == corev1.ClaimBound && c.Annotations["volume.kubernetes.io/selected-node"] == "w-1",
			fmt.Sprint(c.Status, c.Annotations, err, p.Spec.NodeName, p.Status, perr)
	})

	// The server goes away: its kubelet stops, the CCM deletes the node.
	eventually(t, ctx, "node initialised", func() (bool, string) {
		n, err := e.cs.CoreV1().Nodes().Get(ctx, "w-1", metav1.GetOptions{})

		return err == nil && n.Spec.ProviderID != "", fmt.Sprint(err)
	})

	c := hcloud.NewClient(hcloud.WithEndpoint(endpoint), hcloud.WithToken("good"))
	if _, _, err := c.Server.DeleteWithResult(ctx, servers["w-1"]); err != nil {
		t.Fatal(err)
	}

	e.srv.StopKubelet("w-1")

	eventually(t, ctx, "node deleted by the cloud node lifecycle controller", func() (bool, string) {
		_, err := e.cs.CoreV1().Nodes().Get(ctx, "w-1", metav1.GetOptions{})

		return apierrors.IsNotFound(err), fmt.Sprint(err)
	})
}
